"""Edits of compiled programs (.gcb) with valid checksums, for the security
tests: what an attacker who can write a .gcb can make graphcc read.

The layout is runtime/gcb.h's (docs/gcb-format.md): a 128-byte header
(file_size @48, meta_offset/size/xxh3 @56/64/72, weights_offset/size/xxh3
@80/88/96), then META: u32 string-table bytes, the string table
(NUL-terminated strings; references are u32 offsets into it), then u32
n_libraries, each (u32 path reference, 32-byte SHA-256), then the program.
META is followed by padding up to the 4096-byte aligned weights.
"""
import ctypes
import struct

ALIGN = 4096


def _xxh3(buf):
    lib = ctypes.CDLL("libxxhash.so.0")
    lib.XXH3_64bits.restype = ctypes.c_uint64
    lib.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    return lib.XXH3_64bits(bytes(buf), len(buf))


class Program:
    def __init__(self, path):
        data = open(path, "rb").read()
        self.header = bytearray(data[:128])
        mo, ms, _, wo, ws, _ = struct.unpack_from("<6Q", data, 56)
        self.meta = bytearray(data[mo:mo + ms])
        self.weights = data[wo:wo + ws]

    def strings(self):
        """{string: offset} of the string table."""
        n = struct.unpack_from("<I", self.meta, 0)[0]
        table = bytes(self.meta[4:4 + n])
        out, at = {}, 0
        while at < n:
            end = table.index(b"\0", at)
            out.setdefault(table[at:end].decode(), at)
            at = end + 1
        return out

    def add_string(self, s):
        """Appends s to the string table; returns its offset. References
        stay valid (they are offsets from the table's start)."""
        n = struct.unpack_from("<I", self.meta, 0)[0]
        raw = s.encode() + b"\0"
        self.meta[4 + n:4 + n] = raw
        struct.pack_into("<I", self.meta, 0, n + len(raw))
        return n

    def libraries(self):
        """[(path, sha256 hex)] of the pin list."""
        n = struct.unpack_from("<I", self.meta, 0)[0]
        at = 4 + n
        count = struct.unpack_from("<I", self.meta, at)[0]
        at += 4
        names = {v: k for k, v in self.strings().items()}
        out = []
        for _ in range(count):
            ref = struct.unpack_from("<I", self.meta, at)[0]
            out.append((names[ref], bytes(self.meta[at + 4:at + 36]).hex()))
            at += 36
        return out

    def retarget_binding(self, old, new):
        """Points every custom binding whose library is `old` at `new` (a new
        string), leaving the pin list as it was. Returns how many changed."""
        n = struct.unpack_from("<I", self.meta, 0)[0]
        off_old = self.strings()[old]
        start = 4 + n + 4 + 36 * struct.unpack_from("<I", self.meta, 4 + n)[0]
        off_new = self.add_string(new)
        delta = len(new.encode()) + 1
        start += delta
        changed = 0
        # A binding is 11 string references: manifest (a .yaml), op_name,
        # domain, op_type, flavour, backend, config, library, symbol, init,
        # destroy. Find the manifest..library run.
        names = {v: k for k, v in self.strings().items()}
        at = start
        while at + 8 <= len(self.meta):
            refs = struct.unpack_from("<9I", self.meta, at) if at + 36 <= len(self.meta) else ()
            if (refs and refs[7] == off_old and all(r in names for r in refs)
                    and names[refs[0]].endswith(".yaml")):
                struct.pack_into("<I", self.meta, at + 28, off_new)
                changed += 1
                at += 36
                continue
            at += 1
        return changed

    def save(self, path):
        mo = 128
        ms = len(self.meta)
        wo = (mo + ms + ALIGN - 1) // ALIGN * ALIGN
        ws = len(self.weights)
        h = bytearray(self.header)
        struct.pack_into("<Q", h, 48, wo + ws)
        struct.pack_into("<6Q", h, 56, mo, ms, _xxh3(self.meta), wo, ws, _xxh3(self.weights))
        data = bytes(h) + bytes(self.meta) + b"\0" * (wo - mo - ms) + self.weights
        with open(path, "wb") as f:
            f.write(data)
