"""AWS event-stream framing, written: how ``toolslip serve`` frames a Bedrock ConverseStream answer.

botocore reads this framing (``botocore.eventstream.EventStreamBuffer``) but has no writer, so the few
rules are written here, and the tests read every frame back with botocore's parser. A message is

    total length (uint32) | headers length (uint32) | CRC32 of those 8 bytes
    headers: name length (uint8), name, type 7 (string), value length (uint16), value; repeated
    payload
    CRC32 of everything before it

all integers big-endian. A ConverseStream event carries three string headers: ``:event-type``
(``messageStart``, ``contentBlockDelta``...), ``:content-type`` ``application/json`` and
``:message-type`` ``event``; an error after the stream began is ``:message-type`` ``exception`` with an
``:exception-type``.
"""

from __future__ import annotations

import binascii
import struct
from collections.abc import Mapping

__all__ = ["encode_message", "event", "exception"]

_STRING = 7


def encode_message(headers: Mapping[str, str], payload: bytes) -> bytes:
    """One framed message with string ``headers``."""
    encoded = b"".join(_header(name, value) for name, value in headers.items())
    total = 12 + len(encoded) + len(payload) + 4
    prelude = struct.pack(">II", total, len(encoded))
    prelude += struct.pack(">I", binascii.crc32(prelude))
    message = prelude + encoded + payload
    return message + struct.pack(">I", binascii.crc32(message))


def event(event_type: str, payload: bytes) -> bytes:
    """A ConverseStream event: ``event("contentBlockDelta", b'{"contentBlockIndex":0,...}')``."""
    return encode_message(
        {":event-type": event_type, ":content-type": "application/json", ":message-type": "event"}, payload
    )


def exception(exception_type: str, payload: bytes) -> bytes:
    """An error inside the stream (``modelStreamErrorException``, ``throttlingException``...)."""
    return encode_message(
        {":exception-type": exception_type, ":content-type": "application/json", ":message-type": "exception"},
        payload,
    )


def _header(name: str, value: str) -> bytes:
    raw_name, raw_value = name.encode(), value.encode()
    return struct.pack(">B", len(raw_name)) + raw_name + struct.pack(">BH", _STRING, len(raw_value)) + raw_value
