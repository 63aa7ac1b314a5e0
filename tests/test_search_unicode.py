"""The analyzer in every script: a question finds the tool described in its script, and across scripts."""

import pytest

from toolslip import ToolSpec
from toolslip.search import ToolIndex, terms


def spec(name: str, description: str) -> ToolSpec:
    return ToolSpec(name=name, description=description, parameters={"type": "object", "properties": {}})


# One tool set per script: the weather tool among neighbours written in the same script.
CASES = {
    "cyrillic": (
        [
            spec("pogoda", "Текущая погода в городе: температура и осадки."),
            spec("kurs", "Курс валюты к рублю на сегодня."),
            spec("pochta", "Отправить письмо по электронной почте."),
        ],
        "Какая погода сейчас в Москве?",
        "pogoda",
    ),
    "greek": (
        [
            spec("kairos", "Ο καιρός σε μια πόλη: θερμοκρασία και βροχή."),
            spec("nomisma", "Μετατροπή νομίσματος με τη σημερινή ισοτιμία."),
        ],
        "Τι καιρό κάνει στην Αθήνα;",
        "kairos",
    ),
    "arabic": (
        [spec("taqs", "حالة الطقس الحالية في مدينة: درجة الحرارة والرياح."), spec("sarf", "تحويل العملات بسعر اليوم.")],
        "ما هو الطقس في القاهرة؟",
        "taqs",
    ),
    "hebrew": (
        [spec("mezeg", "מזג האוויר הנוכחי בעיר: טמפרטורה ורוח."), spec("matbea", "המרת מטבע לפי השער של היום.")],
        "מה מזג האוויר בתל אביב?",
        "mezeg",
    ),
    "devanagari": (
        [spec("mausam", "किसी शहर का वर्तमान मौसम: तापमान और बारिश।"), spec("mudra", "आज की दर पर मुद्रा बदलें।")],
        "दिल्ली में मौसम कैसा है?",
        "mausam",
    ),
    "latin-accents": (
        [
            spec("wetter", "Das aktuelle Wetter in einer Stadt, z. B. München oder Zürich."),
            spec("kurs", "Wechselkurs einer Währung."),
        ],
        "Wie ist das Wetter in Munchen?",  # typed without the umlaut
        "wetter",
    ),
    "latin-accents-folded-in-the-doc": (
        [spec("horario", "Horario de autobuses de una ciudad."), spec("clima", "El clima de una ciudad.")],
        "¿Cuál es el horario del autobús en Bogotá?",
        "horario",
    ),
    "chinese": (
        [spec("tianqi", "查询城市的实时天气和气温。"), spec("huilv", "按今天的汇率换算货币。")],
        "北京今天天气怎么样？",
        "tianqi",
    ),
    "japanese": (
        [spec("tenki", "都市の現在の天気と気温を調べる。"), spec("kawase", "今日の為替レートで通貨を換算する。")],
        "東京の天気を教えて",
        "tenki",
    ),
    "korean": (
        [spec("nalssi", "도시의 현재 날씨와 기온을 조회합니다."), spec("hwanyul", "오늘 환율로 통화를 변환합니다.")],
        "서울 날씨를 알려줘",
        "nalssi",
    ),
    "thai": (
        [spec("akat", "ตรวจสอบสภาพอากาศปัจจุบันของเมือง"), spec("ngoen", "แปลงสกุลเงินตามอัตราวันนี้")],
        "สภาพอากาศที่กรุงเทพเป็นอย่างไร",
        "akat",
    ),
    "lao": (
        [spec("aakat", "ກວດສອບສະພາບອາກາດຂອງເມືອງ"), spec("ngern", "ປ່ຽນສະກຸນເງິນ")],
        "ສະພາບອາກາດຢູ່ວຽງຈັນ",
        "aakat",
    ),
    "khmer": (
        [spec("akas", "ពិនិត្យអាកាសធាតុនៅក្នុងទីក្រុង"), spec("luy", "ប្តូររូបិយប័ណ្ណ")],
        "អាកាសធាតុនៅភ្នំពេញ",
        "akas",
    ),
}


@pytest.mark.parametrize("script", list(CASES))
def test_a_question_finds_the_tool_described_in_its_script(script: str) -> None:
    tools, question, answer = CASES[script]
    hits = ToolIndex(tools).search(question, 3)
    assert hits and hits[0].name == answer


def test_a_chinese_question_finds_an_english_tool() -> None:
    tools = [
        spec("get_weather", "Current weather of a city: temperature and sky."),
        spec("convert_currency", "Convert an amount between currencies at today's rate."),
        spec("send_email", "Send an email to one recipient."),
    ]
    index = ToolIndex(tools)
    assert index.search("北京后天的天气如何？", 1)[0].name == "get_weather"
    assert index.search("把100美元换成人民币，汇率是多少", 1)[0].name == "convert_currency"
    assert index.search("给张三发一封邮件", 1)[0].name == "send_email"
    assert index.search("날씨 알려줘", 1)[0].name == "get_weather"


def test_a_mixed_question_finds_a_tool_by_its_latin_words() -> None:
    tools = [spec("create_jira_issue", "Create an issue in a Jira project."), spec("get_weather", "Weather of a city.")]
    assert ToolIndex(tools).search("帮我在 Jira 里创建一个 issue", 1)[0].name == "create_jira_issue"


def test_terms_keep_every_script() -> None:
    assert terms("привет мир") == ["приве", "мир"]
    assert terms("München") == terms("Munchen") == ["munchen"]
    assert terms("Straße") == ["strass"]
    assert terms("Ａｐｐｌｅ１２") == ["appl", "12"]  # full-width letters are letters
    assert "मौसम" in terms("दिल्ली में मौसम")  # Devanagari vowel signs stay inside their word
    assert terms("查询订单") == ["查询", "询订", "订单"]
