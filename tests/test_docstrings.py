from toolslip.docstrings import parse_docstring


def test_google_style_with_continuation_and_other_sections() -> None:
    doc = """Convert money.

    Use only for USD, EUR and JPY.

    Args:
        amount (float): The amount,
            in the foreign currency.
        currency: ISO code.

    Returns:
        A sentence.
    """
    description, params = parse_docstring(doc)
    assert description == "Convert money.\n\nUse only for USD, EUR and JPY."
    assert params == {"amount": "The amount, in the foreign currency.", "currency": "ISO code."}


def test_numpy_style() -> None:
    doc = """Find orders.

    Parameters
    ----------
    user_id : str
        The user's id.
    start, end : str
        ISO dates.

    Returns
    -------
    list
    """
    description, params = parse_docstring(doc)
    assert description == "Find orders."
    assert params == {"user_id": "The user's id.", "start": "ISO dates.", "end": "ISO dates."}


def test_sphinx_style() -> None:
    doc = """Send mail.

    :param str to: Recipient address,
        with domain.
    :param body: The text.
    :returns: nothing
    """
    description, params = parse_docstring(doc)
    assert description == "Send mail."
    assert params == {"to": "Recipient address, with domain.", "body": "The text."}


def test_empty_docstring() -> None:
    assert parse_docstring(None) == ("", {})
