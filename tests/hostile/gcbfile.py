"""Reading and editing .gcb compiled programs for the hostile corpus, with
the checksums recomputed, so that an edit reaches the loader's meaning
checks instead of stopping at the checksum. The layout is runtime/gcb.h's
(docs/gcb-format.md explains it).

    g = Gcb(path)
    prog = g.program            # the model's program record, parsed
    g.set(prog.nodes[0].ins[0], -1)
    g.save(out_path)            # recomputes both XXH3 checksums

Every field is an F: its offset in the file, its struct format and value.
A node's `subs` are programs of the same shape. `splice` replaces bytes of
META (the header's meta_size follows), for edits that change a count.
"""
import ctypes
import struct

HEADER = 128


def xxh3(buf):
    lib = ctypes.CDLL("libxxhash.so.0")
    lib.XXH3_64bits.restype = ctypes.c_uint64
    lib.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    return lib.XXH3_64bits(bytes(buf), len(buf))


class F:
    def __init__(self, off, fmt, val):
        self.off, self.fmt, self.val = off, fmt, val

    def __repr__(self):
        return "F(@%d %s %r)" % (self.off, self.fmt, self.val)


class Obj:
    def __init__(self, **kw):
        self.__dict__.update(kw)


class _Reader:
    def __init__(self, buf, at, strings):
        self.b, self.at, self.strings = buf, at, strings

    def f(self, fmt):
        v = struct.unpack_from("<" + fmt, self.b, self.at)[0]
        r = F(self.at, fmt, v)
        self.at += struct.calcsize(fmt)
        return r

    def v(self, fmt):
        return self.f(fmt).val

    def s(self):
        r = self.f("I")
        r.text = None if r.val == 0xffffffff else self.strings.get(r.val)
        return r

    def blob(self):
        n = self.v("Q")
        self.at += n
        return n

    def type_(self):
        dt, rank = self.f("I"), self.f("i")
        dims = [self.f("q") for _ in range(max(rank.val, 0))]
        return dt, rank, dims

    def tensor_value(self):
        dt, rank, dims = self.type_()
        if dt.val == 8:  # string
            n = 1
            for d in dims:
                n *= d.val
            for _ in range(n):
                self.blob()
        else:
            self.blob()

    def attr(self):
        a = Obj(name=self.s(), type=self.f("I"), n=self.f("q"))
        t, n = a.type.val, a.n.val
        if t == 1:
            a.value = self.f("f")
        elif t == 2:
            a.value = self.f("q")
        elif t == 3:
            self.blob()
        elif t == 7:
            a.value = [self.f("q") for _ in range(n)]
        elif t == 6:
            a.value = [self.f("f") for _ in range(n)]
        elif t == 8:
            for _ in range(n):
                self.blob()
        elif t == 4:
            self.tensor_value()
        elif t == 9:
            for _ in range(n):
                self.tensor_value()
        else:
            raise ValueError("attribute type %d" % t)
        return a

    def custom(self):
        c = Obj()
        for k in ("manifest", "op_name", "domain", "op_type", "flavour", "backend", "config",
                  "library", "symbol", "init", "destroy"):
            setattr(c, k, self.s())
        c.kernel_scratch, c.flags, n_params = self.f("Q"), self.f("I"), self.v("i")
        c.params = []
        for _ in range(n_params):
            p = Obj(name=self.s(), dtype=self.f("I"), size=self.f("i"))
            if p.dtype.val == 10:  # DTString
                for _ in range(max(p.size.val, 1)):
                    self.s()
            else:
                self.blob()
            c.params.append(p)
        c.n_in = self.f("i")
        c.in_max_dims = [self.f("i") for _ in range(c.n_in.val)]
        c.n_out = self.f("i")
        c.outs = []
        for _ in range(c.n_out.val):
            md = self.f("i")
            dt, rank, dims = self.type_()
            c.outs.append(Obj(max_dims=md, dtype=dt, rank=rank, dims=dims))
        # format 3, flag 4: per input then output, the quantized edge
        # (CustomOpDataType, scale, offset)
        c.quant = []
        if c.flags.val & 4:
            for _ in range(c.n_in.val + c.n_out.val):
                c.quant.append(Obj(dtype=self.f("I"), scale=self.f("f"), offset=self.f("i")))
        return c

    def program(self):
        p = Obj(start=self.at, tensors=[], nodes=[])
        p.n_tensors = self.f("I")
        for _ in range(p.n_tensors.val):
            name = self.s()
            dt, rank, dims = self.type_()
            p.tensors.append(Obj(name=name, dtype=dt, rank=rank, dims=dims,
                                 storage=self.f("I"), offset=self.f("Q"),
                                 nbytes=self.f("Q")))
        p.n_inputs = self.f("I")
        p.inputs = [self.f("i") for _ in range(p.n_inputs.val)]
        p.n_outputs = self.f("I")
        p.outputs = [self.f("i") for _ in range(p.n_outputs.val)]
        p.arena_bytes, p.tensor_bytes, p.const_bytes = self.f("Q"), self.f("Q"), self.f("Q")
        p.n_formal = self.f("i")
        p.outer_slot = [self.f("i") for _ in range(p.n_inputs.val - p.n_formal.val)] \
            if p.n_formal.val != p.n_inputs.val else []
        p.n_nodes = self.f("I")
        for _ in range(p.n_nodes.val):
            n = Obj(start=self.at, name=self.s(), domain=self.s(), op_type=self.s(),
                    opset=self.f("i"))
            n.n_in = self.f("I")
            n.ins = [self.f("i") for _ in range(n.n_in.val)]
            n.n_out = self.f("I")
            n.outs = [self.f("i") for _ in range(n.n_out.val)]
            n.scratch_bytes, n.scratch_offset = self.f("Q"), self.f("Q")
            n.n_attr = self.f("I")
            n.attrs = [self.attr() for _ in range(n.n_attr.val)]
            n.has_custom = self.f("I")
            n.custom = self.custom() if n.has_custom.val else None
            n.flags, n.n_explicit_in, n.n_sub = self.f("I"), self.f("i"), self.f("I")
            n.subs = [self.program() for _ in range(n.n_sub.val)]
            n.end = self.at
            p.nodes.append(n)
        p.end = self.at
        return p


class Gcb:
    def __init__(self, path_or_bytes):
        if isinstance(path_or_bytes, (bytes, bytearray)):
            self.b = bytearray(path_or_bytes)
        else:
            with open(path_or_bytes, "rb") as f:
                self.b = bytearray(f.read())
        self.parse()

    def u64(self, off):
        return struct.unpack_from("<Q", self.b, off)[0]

    def parse(self):
        mo = self.u64(56)
        nstr = struct.unpack_from("<I", self.b, mo)[0]
        table = bytes(self.b[mo + 4:mo + 4 + nstr])
        self.strings, self.string_at = {}, {}
        at = 0
        while at < len(table):
            end = table.index(b"\0", at)
            s = table[at:end].decode("utf-8", "replace")
            self.strings[at] = s
            self.string_at.setdefault(s, at)
            at = end + 1
        r = _Reader(self.b, mo + 4 + nstr, self.strings)
        self.libraries = []
        for _ in range(r.v("I")):
            self.libraries.append(Obj(path=r.s(), sha=r.at))
            r.at += 32
        self.program = r.program()

    def set(self, field, value):
        struct.pack_into("<" + field.fmt, self.b, field.off, value)
        field.val = value

    def splice(self, start, end, data=b""):
        """Replaces file bytes [start, end) inside META by data; the fields
        parsed before are stale afterwards (parse again)."""
        mo, ms, wo = self.u64(56), self.u64(64), self.u64(80)
        grow = len(data) - (end - start)
        if not (mo <= start <= end <= mo + ms) or mo + ms + grow > wo:
            raise ValueError("splice outside META or past the weights")
        self.b[start:end] = data
        # keep the weights where they were: pad or trim the gap before them
        gap_at = mo + ms + grow
        if grow > 0:
            del self.b[gap_at:gap_at + grow]
        elif grow < 0:
            self.b[gap_at:gap_at] = b"\0" * -grow
        struct.pack_into("<Q", self.b, 64, ms + grow)
        self.parse()

    def add_string(self, text):
        """Appends text to the string table; -> its reference."""
        mo, ms, wo = self.u64(56), self.u64(64), self.u64(80)
        nstr = struct.unpack_from("<I", self.b, mo)[0]
        data = text.encode() + b"\0"
        if mo + ms + len(data) > wo:
            raise ValueError("no room before the weights")
        at = mo + 4 + nstr
        self.b[at:at] = data
        del self.b[mo + ms + len(data):mo + ms + 2 * len(data)]
        struct.pack_into("<I", self.b, mo, nstr + len(data))
        struct.pack_into("<Q", self.b, 64, ms + len(data))
        self.parse()
        return nstr

    def rehash(self):
        mo, ms = self.u64(56), self.u64(64)
        wo, ws = self.u64(80), self.u64(88)
        struct.pack_into("<Q", self.b, 72, xxh3(self.b[mo:mo + ms]))
        struct.pack_into("<Q", self.b, 96, xxh3(self.b[wo:wo + ws]))
        return self

    def save(self, path):
        self.rehash()
        with open(path, "wb") as f:
            f.write(bytes(self.b))
        return path

    def node(self, name, prog=None):
        """The first node called name, searched depth-first."""
        for n in (prog or self.program).nodes:
            if n.name.text == name:
                return n
            for s in n.subs:
                found = self.node(name, s)
                if found:
                    return found
        return None

    def tensor(self, prog, name):
        return next(i for i, t in enumerate(prog.tensors) if t.name.text == name)
