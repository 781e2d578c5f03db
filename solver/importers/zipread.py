"""Members of a zip archive one at a time, zstd included (inspect_ai's `.eval` compresses every member
with zstd, method 93, which Python's zipfile reads only from 3.14 on).

A member is read whole but alone, and never past the size its central-directory entry declares nor past
`limit`, so an archive's memory is one member's, however large the archive, and a member that inflates
beyond what it declares (a zip bomb) is refused. Every member's CRC-32 is checked, as zipfile does.
zstd members are decompressed with the `zstandard` bindings from the raw bytes behind the member's local
header; zipfile's own decompression is used for every other method, so a process where another package
patched zipfile (inspect_ai does) reads them the same way.
"""
from __future__ import annotations

import io
import struct
import zipfile
import zlib
from typing import IO

ZSTD = 93  # APPNOTE 4.4.5: compression method 93 is Zstandard
_LOCAL = struct.Struct("<4s2B4HL2L2H")  # a local file header (APPNOTE 4.3.7), 30 bytes
_LOCAL_MAGIC = b"PK\x03\x04"


MAX_MEMBERS = 50_000  # members one archive may list (a .eval of 1,100 cases x 5 epochs has 5,500)
MAX_DIRECTORY = 8 << 20  # bytes of central directory zipfile may read and build ZipInfo objects from
MAX_TOTAL = 4 << 30  # uncompressed bytes all members together may declare (each is read and checked)


class MemberError(ValueError):
    """A member that cannot be read: the message says which and why."""


def open_archive(raw: IO[bytes]) -> zipfile.ZipFile:
    """`raw` as a zip archive, refused (MemberError) before zipfile builds its directory when that directory is
    over `MAX_DIRECTORY` bytes, and after when it lists over `MAX_MEMBERS` members or `MAX_TOTAL` bytes.

    The end record's sizes are what zipfile itself reads the directory by; an archive whose records lie about
    offsets or sizes fails in zipfile (BadZipFile) or in `read_member`, never past these bounds."""
    end = zipfile._EndRecData(raw)  # type: ignore[attr-defined]  # zipfile's own reading of the end record
    if end is None:
        raise zipfile.BadZipFile("no end of central directory record: not a zip archive")
    if end[zipfile._ECD_SIZE] > MAX_DIRECTORY:  # type: ignore[attr-defined]
        raise MemberError(f"its central directory declares {end[zipfile._ECD_SIZE]:,} bytes, over the "  # type: ignore[attr-defined]
                          f"{MAX_DIRECTORY:,} an archive may have")
    z = zipfile.ZipFile(raw)
    infos = z.infolist()
    if len(infos) > MAX_MEMBERS or sum(i.file_size for i in infos) > MAX_TOTAL:
        z.close()
        raise MemberError(f"it lists {len(infos):,} members ({sum(i.file_size for i in infos):,} bytes), over the "
                          f"{MAX_MEMBERS:,} members or {MAX_TOTAL:,} bytes an archive may hold")
    return z


def read_member(z: zipfile.ZipFile, raw: IO[bytes], info: zipfile.ZipInfo, limit: int) -> bytes:
    """The member's bytes, decompressed and checked; `raw` is the archive opened in binary mode."""
    if info.flag_bits & 0x1:
        raise MemberError(f"{info.filename}: encrypted")
    if info.file_size > limit:
        raise MemberError(f"{info.filename}: {info.file_size:,} bytes uncompressed, over the {limit:,} a member "
                          "may hold")
    if info.compress_type == ZSTD:
        data = _zstd(raw, info)
    else:
        try:
            with z.open(info) as f:
                data = f.read(info.file_size + 1)
        except NotImplementedError:
            raise MemberError(f"{info.filename}: compression method {info.compress_type} is not one this reader "
                              "knows") from None
    if len(data) != info.file_size:
        raise MemberError(f"{info.filename}: holds more or fewer bytes than the archive declares "
                          f"({info.file_size:,})")
    if zlib.crc32(data) != info.CRC:
        raise MemberError(f"{info.filename}: CRC-32 check failed (the archive is damaged)")
    return data


def _zstd(raw: IO[bytes], info: zipfile.ZipInfo) -> bytes:
    import zstandard

    raw.seek(info.header_offset)
    head = raw.read(_LOCAL.size)
    if len(head) != _LOCAL.size or head[:4] != _LOCAL_MAGIC:
        raise MemberError(f"{info.filename}: no local file header where the central directory points")
    fields = _LOCAL.unpack(head)
    raw.seek(fields[10] + fields[11], io.SEEK_CUR)  # past the name and the extra field
    packed = raw.read(info.compress_size)
    if len(packed) != info.compress_size:
        raise MemberError(f"{info.filename}: the archive ends inside this member")
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(packed), read_across_frames=True)
        out = bytearray()
        while len(out) <= info.file_size:  # one byte past the declared size is enough to see a liar
            chunk = reader.read(info.file_size + 1 - len(out))
            if not chunk:
                break
            out += chunk
        return bytes(out)
    except zstandard.ZstdError as e:
        raise MemberError(f"{info.filename}: not valid zstd data ({e})") from None
