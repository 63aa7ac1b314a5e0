"""Text analysis for tool search and the linter: every script tokenised, identifiers split, queries expanded.

Tool names are identifiers (``getOrderById``, ``currency_exchange.convert``) and descriptions are prose in
any language; questions name instances ("500 US dollars", "2 pounds") where tool docs name the class
("currency", "weight"), and are often asked in another language than the tool was described in. So:

* a word is any run of letters, digits and combining marks in any script (``\\w`` alone would cut Hindi
  words at their vowel signs);
* Latin, Greek and Cyrillic are case-folded and their accents folded (``München`` -> ``munchen``, ``ё`` ->
  ``е``); Arabic and Hebrew lose their vowel points; Indic scripts keep theirs, where they are letters;
* English words are stemmed by a light suffix stripper, Cyrillic, Greek and Armenian words (whose endings
  carry case) are cut to their first 5 letters, Arabic and Hebrew lose a leading article;
* scripts written without spaces (Chinese, Japanese, Korean words with their particles, Thai, Lao, Khmer,
  Myanmar, Tibetan) become overlapping character bigrams;
* a query also gets the English class of its instance words ("yen" -> currency), English compounds the
  index knows ("board game" -> boardgame), and the English words of common tool vocabulary written in
  Chinese, Japanese, Korean or Thai (``天气`` -> weather), so a question in those scripts can find a tool
  described in English.

Everything here is pure and cached per word: tool sets repeat their words a lot.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from functools import lru_cache

__all__ = ["CAMEL", "CJK", "expand", "intents", "stem", "terms"]

_STOP = frozenset(
    # English
    """a an and are as at be been by can could do does for from get given has have how i if in into is it
    its me my of on or our please should so than that the their them then there these this those to us
    was we what when where which who whom will with would you your"""
    # Spanish, French, German, Italian, Portuguese: the articles, prepositions and pronouns every question has
    """ el la los las un una unos unas del al en por para con que qué es y o de se su sus lo mi me
    le les des du et est une pour dans sur avec au aux ce cette qui quel quelle je vous nous
    der die das den dem des ein eine einen und ist im zu mit für von auf ich sie wie was wo
    il lo gli di da nel che per una è e
    os as um uma no na nos nas do da dos das em com por para que é
    """
    # Russian (after folding ё/й), Greek (after folding its accents), Hindi, Arabic, Hebrew
    """ и в во на с со к ко по за из у о об от до для как что это мне я ты вы мы он она они не ли бы же
    какои какая какое какие где когда сколько почему можно нужно пожалуиста есть
    ο η το οι τα του τησ των στο στη στον στην σε και ποιοσ ποια ποιο τι πωσ ειναι για με
    है हैं में का की के को से और क्या कैसा कैसे पर यह
    في من على الى إلى عن ما هو هي هل كيف
    של את על מה אני זה עם
    """.split()
)
# The question words of Chinese, Japanese and Korean questions, as the bigrams they become.
_STOP_GRAMS = frozenset(
    """怎么 么样 什么 一下 帮我 请问 我想 可以 如何 现在 今天 是否 多少
    教え えて ください 알려 려줘 주세요 어떻게""".split(),
)
# Identifier boundaries: "getHTTPResponse" -> get HTTP Response; digits stand alone.
CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
# Combining marks of the scripts whose words contain them; \w does not match them.
_MARKS = (
    "\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed"
    "\u0900-\u0963\u0966-\u0dff\u0e00-\u0e7f\u0e80-\u0eff\u0f00-\u0fff\u1000-\u109f\u1780-\u17ff"
    "\u1dc0-\u1dff\u200c\u200d\u20d0-\u20ff\ufe20-\ufe2f"
)
_WORD = re.compile(f"[^\\W_]+(?:[{_MARKS}]+[^\\W_]*)*|[{_MARKS}]+[^\\W_]*")
# Spaceless scripts: CJK ideographs, kana, Hangul, Thai, Lao, Khmer, Myanmar, Tibetan.
_SPACELESS = (
    "\u0e00-\u0eff\u0f00-\u0fff\u1000-\u109f\u1100-\u11ff\u1780-\u17ff\u3040-\u30ff\u3130-\u318f"
    "\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f"
    "\U00020000-\U0003134f"
)
_RUNS = re.compile(f"[{_SPACELESS}]+|[^{_SPACELESS}]+")
_SPACELESS_CHAR = re.compile(f"[{_SPACELESS}]")
_THAI_TONES = re.compile("[\u0e47-\u0e4e\u0ec8-\u0ecd]")
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
"""One character of Japanese kana, a CJK ideograph or Hangul (what counts as half a word in the linter)."""
_SUFFIXES = (
    "ational", "ations", "ation", "ically", "ical", "ions", "ion", "ings", "ing", "edly",
    "ies", "ied", "ers", "er", "ed", "es", "ly", "s",
)  # fmt: skip
_UNFOLDED = str.maketrans({"ø": "o", "æ": "ae", "œ": "oe", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "ı": "i"})
_ARABIC = str.maketrans({"أ": "ا", "إ": "ا", "آ": "ا", "ٱ": "ا", "ى": "ي", "ة": "ه", "ؤ": "و", "ئ": "ي", "ـ": None})
_ARABIC_PREFIXES = ("وال", "بال", "كال", "فال", "لل", "ال")
_TRUNCATED = re.compile(r"[\u0370-\u03ff\u0400-\u052f\u0530-\u058f]")  # Greek, Cyrillic, Armenian
_INDIC = re.compile(r"[\u0900-\u0dff]")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light English suffix stripper: enough to make plural, -ing, -ed and -ation forms meet."""
    if len(word) <= 3 or word.isdigit():
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            stem = word[: -len(suffix)]
            if suffix in ("ies", "ied"):
                return stem + "y"
            if suffix.startswith("ation"):  # "calculation" meets "calculate", "calculating": "calculat"
                return stem + "at"
            if suffix.startswith("ical"):  # "genetically", "genetical" -> "genetic"
                return stem + "ic"
            if suffix.startswith("ion"):  # "invention" -> "invent", "discussion" -> "discuss"; not "region"
                if stem[-1] not in "st" or len(stem) < 4:
                    continue
                return stem
            if suffix == "s" and word.endswith("ss"):
                return word
            if suffix in ("es", "ed", "er", "ers") and stem[-1] == stem[-2:-1]:  # "stopped" -> "stop"
                return stem[:-1]
            return stem.rstrip("e") if len(stem) > 3 else stem
    return word.rstrip("e") if len(word) > 4 else word


def terms(text: str) -> list[str]:
    """The index terms of ``text``: words of every script, folded and stemmed; spaceless scripts as bigrams."""
    return [term for chunk in _WORD.findall(text) for term in _chunk_terms(chunk)]


@lru_cache(maxsize=131072)
def _chunk_terms(chunk: str) -> tuple[str, ...]:
    """Terms of one run of letters, marks and digits."""
    if chunk.isascii():
        return _ascii_terms(chunk)
    out: list[str] = []
    for run in _RUNS.findall(unicodedata.normalize("NFKC", chunk)):
        if not _SPACELESS_CHAR.match(run):
            out += _word_terms(run)
            continue
        if "\u0e00" <= run[0] <= "\u0eff":
            run = _THAI_TONES.sub("", run) or run  # Thai and Lao tone marks, folded like accents
        grams = [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
        out += [g for g in grams if g not in _STOP_GRAMS]
    return tuple(out)


def _ascii_terms(chunk: str) -> tuple[str, ...]:
    words = (piece.lower() for piece in CAMEL.findall(chunk))
    return tuple(stem(word) for word in words if word not in _STOP)


def _word_terms(run: str) -> tuple[str, ...]:
    """A word of a script written with spaces: Latin with accents, Greek, Cyrillic, Arabic, Hebrew, Indic..."""
    if _INDIC.search(run):  # their vowel signs are combining marks but letters all the same
        return () if run in _STOP else (run,)
    folded = "".join(c for c in unicodedata.normalize("NFKD", run.casefold()) if not unicodedata.combining(c))
    folded = folded.translate(_UNFOLDED)
    if folded.isascii():
        return _ascii_terms(folded)
    out = []
    for word in re.findall(r"[^\W\d_]+|\d+", folded):
        if word in _STOP:
            continue
        if _TRUNCATED.match(word):  # case endings: "погода", "погоду", "погодой" -> "погод"; "καιρός", "καιρό"
            for _ in range(2):
                if len(word) > 3 and word[-1] in "аеиоуыэюяьйοαηιυωσ":
                    word = word[:-1]
            word = word[:5]
        elif "\u0600" <= word[0] <= "\u06ff":
            word = _arabic(word)
        elif "\u05d0" <= word[0] <= "\u05ea" and len(word) >= 3 and word[0] in "הובלמשכ":
            out.append(word[1:])  # maybe a prefix (the, and, in, to, from...): both forms, since it may not be
        out.append(word)
    return tuple(out)


def _arabic(word: str) -> str:
    word = word.translate(_ARABIC)
    for prefix in _ARABIC_PREFIXES:
        if word.startswith(prefix) and len(word) - len(prefix) >= 3:
            return word[len(prefix) :]
    return word


_CONCEPTS = {
    "currency": "dollar dollars usd eur euro euros yen jpy gbp yuan cny rmb rupee rupees inr chf peso pesos won krw",
    "distance length unit": "mile miles km kilometer kilometers kilometre meter meters metre feet foot inch inches "
    "yard yards",
    "weight unit measurement": "ounce ounces oz pound pounds lb lbs kg kilogram kilograms gram grams ton tons",
    "volume unit measurement": "cup cups liter liters litre litres gallon gallons ml tablespoon tablespoons teaspoon "
    "teaspoons",
    "temperature": "celsius fahrenheit kelvin",
    "date": "monday tuesday wednesday thursday friday saturday sunday january february march april june july "
    "august september october november december",
}

# What a question asks done, and what a tool's name says it does, by the verb: "show me order A-1" asks to
# read, as get_order and find_order do and cancel_order does not. Both sides get the intent's term, so the
# verb counts even where no word is shared ("show" / "get") and every tool shares the object ("order").
_INTENTS = {
    "read": "get show view display see find search query list lookup look fetch retrieve read check browse",
    "cancel": "cancel abort revoke void",
    "create": "create add make new insert register book",
    "update": "update change edit modify set rename move",
    "delete": "delete remove erase",
    "send": "send email mail message post notify reply forward",
}
_INTENT_OF = {verb: f"intent:{intent}" for intent, verbs in _INTENTS.items() for verb in verbs.split()}
_VERB_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


def intents(text: str) -> list[str]:
    """The intent terms of the verbs in ``text`` (an identifier or a question), once each: ``intent:read``
    for "get_order_list" and for "show me order A-1"."""
    return list(dict.fromkeys(_INTENT_OF[w] for w in (m.lower() for m in _VERB_WORD.findall(text)) if w in _INTENT_OF))


# Common tool vocabulary in Chinese (simplified and traditional), Japanese, Korean and Thai, to the English words
# tool docs use: a question in those scripts then shares terms with a tool described in English. General
# vocabulary of tool sets (weather, orders, mail, calendars, files...), not the words of any benchmark question.
_GLOSSARY = {
    "weather": "天气 天氣 天気 날씨 อากาศ",
    "temperature": "温度 气温 氣溫 気温 온도 기온 อุณหภูมิ",
    "forecast": "预报 預報 予報 예보 พยากรณ์",
    "news": "新闻 新聞 ニュース 뉴스 ข่าว",
    "search": "搜索 搜尋 检索 檢索 查找 検索 검색 ค้นหา",
    "find": "寻找 尋找 找到 探す 찾아 찾기 หา",
    "get query": "查询 查詢 获取 獲取 取得 조회 ดึง",
    "recipe cook": "食谱 食譜 菜谱 做法 レシピ 料理 레시피 요리 만드는 สูตรอาหาร ทำอาหาร",
    "order": "订单 訂單 下单 注文 주문 คำสั่งซื้อ",
    "ticket": "工单 工單 チケット 티켓 ตั๋ว",
    "email mail": "邮件 郵件 邮箱 郵箱 メール 이메일 메일 อีเมล",
    "send": "发送 發送 送信 보내 전송 ส่ง",
    "message": "消息 讯息 訊息 短信 メッセージ 메시지 ข้อความ",
    "calendar event schedule": "日历 日曆 日程 カレンダー 予定 일정 캘린더 ปฏิทิน",
    "meeting": "会议 會議 会議 회의 ประชุม",
    "flight": "航班 机票 機票 フライト 航空券 항공편 비행기 เที่ยวบิน",
    "hotel": "酒店 宾馆 賓館 旅馆 旅館 ホテル 호텔 โรงแรม",
    "book reserve": "预订 預訂 预定 預定 预约 預約 予約 예약 จอง",
    "restaurant": "餐厅 餐廳 饭店 飯店 レストラン 식당 레스토랑 ร้านอาหาร",
    "food": "食物 外卖 外賣 食べ物 음식 อาหาร",
    "buy purchase": "购买 購買 購入 구매 ซื้อ",
    "price": "价格 價格 价钱 價錢 値段 価格 가격 ราคา",
    "stock": "股票 股价 股價 株価 주식 주가 หุ้น",
    "currency exchange rate": "汇率 匯率 货币 貨幣 為替 通貨 환율 통화 อัตราแลกเปลี่ยน สกุลเงิน",
    "convert": "换成 換成 转换 轉換 兑换 兌換 変換 換算 변환 환전 แปลง",
    "translate": "翻译 翻譯 翻訳 번역 แปล",
    "music song": "音乐 音樂 歌曲 音楽 음악 노래 เพลง",
    "play": "播放 再生 재생 เล่น",
    "video": "视频 視頻 影片 動画 비디오 동영상 วิดีโอ",
    "movie film": "电影 電影 映画 영화 ภาพยนตร์ หนัง",
    "map": "地图 地圖 地図 지도 แผนที่",
    "address location": "地址 住所 位置 주소 위치 ที่อยู่ ตำแหน่ง",
    "route direction navigate": "路线 路線 ルート 导航 導航 경로 길찾기 เส้นทาง",
    "distance": "距离 距離 거리 ระยะทาง",
    "time": "时间 時間 시간 เวลา",
    "date": "日期 日付 날짜 วันที่ 今天 明天 后天 後天 今日 明日 오늘 내일 모레 วันนี้ พรุ่งนี้",
    "timezone": "时区 時區 タイムゾーン 시간대 เขตเวลา",
    "alarm": "闹钟 鬧鐘 アラーム 알람 นาฬิกาปลุก",
    "reminder": "提醒 リマインダー 알림 เตือน",
    "timer countdown": "计时器 計時器 倒计时 倒計時 タイマー 타이머 จับเวลา",
    "user": "用户 用戶 ユーザー 사용자 ผู้ใช้",
    "account": "账户 帳戶 账号 帳號 アカウント 계정 บัญชี",
    "password": "密码 密碼 パスワード 비밀번호 รหัสผ่าน",
    "file": "文件 檔案 ファイル 파일 ไฟล์",
    "document": "文档 文檔 ドキュメント 문서 เอกสาร",
    "folder directory": "文件夹 資料夾 目录 目錄 フォルダ 폴더 โฟลเดอร์",
    "delete remove": "删除 刪除 削除 삭제 ลบ",
    "create": "创建 創建 建立 新建 作成 생성 สร้าง",
    "update modify": "更新 修改 変更 수정 업데이트 แก้ไข",
    "list": "列出 列表 一覧 목록 รายการ",
    "image photo picture": "图片 圖片 照片 画像 写真 이미지 사진 รูปภาพ",
    "generate": "生成 생성",
    "pay payment": "支付 付款 付费 付費 支払 결제 지불 ชำระ จ่าย",
    "transfer": "转账 轉帳 振込 송금 이체 โอนเงิน",
    "bank": "银行 銀行 은행 ธนาคาร",
    "refund": "退款 返金 환불 คืนเงิน",
    "invoice": "发票 發票 請求書 청구서 ใบแจ้งหนี้",
    "product": "产品 產品 商品 제품 상품 สินค้า",
    "shipping delivery package": "快递 快遞 配送 配達 배송 택배 จัดส่ง พัสดุ",
    "taxi ride": "打车 打車 出租车 計程車 叫车 タクシー 택시 แท็กซี่",
    "car vehicle": "汽车 汽車 自動車 자동차 รถยนต์",
    "bus": "公交 公车 公車 巴士 バス 버스 รถเมล์ รถบัส",
    "train": "火车 火車 列车 列車 電車 기차 열차 รถไฟ",
    "air conditioner appliance": "空调 空調 エアコン 에어컨 แอร์ 家电 家電 가전 เครื่องใช้ไฟฟ้า",
    "washing machine": "洗衣机 洗衣機 洗濯機 세탁기 เครื่องซักผ้า",
    "light lamp": "灯光 燈光 照明 조명 ไฟ",
    "volume": "音量 볼륨 ระดับเสียง",
    "company": "公司 会社 企業 企业 회사 기업 บริษัท",
    "service": "服务 服務 サービス 서비스 บริการ",
    "customer": "客户 客戶 顧客 고객 ลูกค้า",
    "support": "客服 サポート 지원 สนับสนุน",
    "doctor": "医生 醫生 医者 의사 แพทย์ หมอ",
    "appointment": "预约 預約 약속 นัดหมาย",
    "repository": "仓库 倉庫 リポジトリ 저장소 리포지토리",
    "code": "代码 代碼 程式碼 コード 코드 โค้ด",
    "branch": "分支 ブランチ 브랜치",
    "commit": "提交 コミット 커밋",
    "database": "数据库 數據庫 資料庫 データベース 데이터베이스 ฐานข้อมูล",
    "table": "表格 テーブル 테이블 ตาราง",
    "calculate compute": "计算 計算 계산 คำนวณ",
    "number": "数字 數字 番号 숫자 번호 ตัวเลข",
    "information": "信息 資訊 情報 정보 ข้อมูล",
    "question": "问题 問題 질문 คำถาม",
    "answer": "回答 答案 답변 คำตอบ",
    "language": "语言 語言 言語 언어 ภาษา",
    "text": "文本 テキスト 텍스트",
    "speech voice audio": "语音 語音 音声 음성 เสียง",
    "city": "城市 都市 도시 เมือง",
    "country": "国家 國家 나라 국가 ประเทศ",
    "population": "人口 인구 ประชากร",
    "job": "工作 职位 職位 求人 일자리 채용 งาน",
    "movie ticket cinema": "影院 映画館 영화관 โรงภาพยนตร์",
}


@lru_cache(maxsize=1)
def _concepts() -> Mapping[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for classes, words in _CONCEPTS.items():
        for word in words.split():
            out[stem(word)] = out.get(stem(word), ()) + tuple(terms(classes))
    return out


@lru_cache(maxsize=1)
def _glossary() -> tuple[re.Pattern[str], Mapping[str, tuple[str, ...]]]:
    english: dict[str, tuple[str, ...]] = {}
    for words, spellings in _GLOSSARY.items():
        for spelling in spellings.split():
            english[spelling] = english.get(spelling, ()) + tuple(terms(words))
    keys = sorted(english, key=len, reverse=True)  # the longest spelling wins where two overlap
    return re.compile("|".join(map(re.escape, keys))), english


def expand(query: str, known: Mapping[str, object]) -> dict[str, float]:
    """Query terms with weights: the terms themselves, the intent of its verbs (:func:`intents`), the class of
    each instance word, compounds, and the English words of tool vocabulary written in Chinese, Japanese,
    Korean or Thai.

    A compound is two adjacent English words written as one ("board game" -> "boardgame"), added only when
    ``known`` (the index vocabulary) has it.
    """
    weights = dict.fromkeys(terms(query), 1.0)
    for intent in intents(query):
        weights.setdefault(intent, 1.0)
    for term in list(weights):
        for concept in _concepts().get(term, ()):
            weights.setdefault(concept, 1.0)
    words = [w.lower() for w in re.findall(r"[A-Za-z]+", query)]
    for first, second in zip(words, words[1:], strict=False):
        joined = stem(first + second)
        if joined in known:
            weights.setdefault(joined, 1.0)
    if not query.isascii():
        pattern, english = _glossary()
        for found in pattern.findall(query):
            for term in english[found]:
                weights.setdefault(term, 1.0)
    return weights
