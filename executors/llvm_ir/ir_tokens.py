"""The token level of the LLVM IR reader (ir.py): a cursor over one instruction's tokens that reads types, values
and constant expressions, and LLVM's float literal forms. Types and operands are the tuples ir.py documents."""
from __future__ import annotations

import re
import struct

from .errors import NotModelled

_TOKEN = re.compile(r"""
    (?P<str>c?"[^"]*")
  | (?P<id>[%@](?:[-\w.$]+|"[^"]*"))
  | (?P<hexf>f0x[0-9A-Fa-f]+|0x[KLMHR]?[0-9A-Fa-f]+)
  | (?P<special>[-+](?:qnan|snan|nan|inf)(?:\(0x[0-9A-Fa-f]+\))?)
  | (?P<num>-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)
  | (?P<word>[A-Za-z_][\w.]*)
  | (?P<hash>\#\d+)
  | (?P<punct>\.\.\.|[(){}\[\]<>,=*:])
""", re.X)
_METADATA = re.compile(r",\s*!\S+\s+!(?:\d+|\{[^}]*\})")
_FLAGS = {"nuw", "nsw", "exact", "disjoint", "nneg", "samesign", "inbounds", "nusw", "inrange", "fast", "nnan", "ninf",
          "nsz", "arcp", "contract", "afn", "reassoc", "tail", "musttail", "notail", "volatile", "weak"}
_ATTRS = {"noundef", "immarg", "nonnull", "inreg", "nofree", "readnone", "readonly", "writeonly", "returned",
          "signext", "zeroext", "noalias", "nocapture", "local_unnamed_addr", "dso_local", "fastcc", "coldcc"}
_PARAM_ATTRS_WITH_ARG = {"align", "dereferenceable", "dereferenceable_or_null", "range", "captures", "nofpclass",
                         "alignstack"}
FLOAT_KINDS = ("half", "bfloat", "float", "double")
FLOAT_BITS = {"half": 16, "bfloat": 16, "float": 32, "double": 64}
BINARY = {"add", "sub", "mul", "udiv", "sdiv", "urem", "srem", "shl", "lshr", "ashr", "and", "or", "xor",
          "fadd", "fsub", "fmul", "fdiv", "frem"}
CASTS = {"trunc", "zext", "sext", "fptrunc", "fpext", "fptoui", "fptosi", "uitofp", "sitofp", "ptrtoint",
         "inttoptr", "bitcast", "addrspacecast"}


NAMED_TYPES: dict = {}  # the module's named struct types, filled by ir.parse before its functions are read


class _Line:
    """A token cursor over one instruction's text."""

    def __init__(self, text, number):
        self.toks = [m.group(0) for m in _TOKEN.finditer(_METADATA.sub("", text))]
        self.i, self.number, self.text = 0, number, text

    def peek(self, k=0):
        return self.toks[self.i + k] if self.i + k < len(self.toks) else ""

    def next(self):
        tok = self.peek()
        self.i += 1
        return tok

    def eat(self, tok):
        if self.peek() == tok:
            self.i += 1
            return True
        return False

    def expect(self, tok):
        if self.next() != tok:
            raise NotModelled(f"IR line {self.number}: expected {tok!r}: {self.text.strip()[:120]}")

    def skip_flags(self):
        """Skip the flags here; returns them (nsw, nuw, exact, disjoint, nneg, samesign, inbounds: poison sources)."""
        flags = ()
        while self.peek() in _FLAGS:
            flags += (self.peek(),)
            self.i += 1
        return flags

    def skip_attrs(self):
        """Skip parameter attributes; returns whether `noundef` was among them (poison there is UB)."""
        noundef = False
        while True:
            tok = self.peek()
            if tok in _ATTRS:
                noundef |= tok == "noundef"
                self.i += 1
            elif tok in _PARAM_ATTRS_WITH_ARG:
                self.i += 1
                if self.peek() == "(":
                    self._skip_parens()
                elif self.peek().isdigit():
                    self.i += 1
            elif tok.startswith("#"):
                self.i += 1
            else:
                return noundef

    def _skip_parens(self):
        depth = 0
        while True:
            tok = self.next()
            depth += tok == "("
            depth -= tok == ")"
            if depth == 0 or tok == "":
                return

    # --- types ---------------------------------------------------------------------------------------------------
    def type(self):
        tok = self.next()
        if tok.startswith("i") and tok[1:].isdigit():
            ty = ("i", int(tok[1:]))
        elif tok in FLOAT_KINDS:
            ty = ("f", tok)
        elif tok == "ptr":
            space = 0
            if self.eat("addrspace"):
                self.expect("(")
                space = int(self.next())
                self.expect(")")
            ty = ("p", space)
        elif tok == "<":
            n = int(self.next())
            self.expect("x")
            ty = ("v", n, self.type())
            self.expect(">")
        elif tok == "[":
            n = int(self.next())
            self.expect("x")
            ty = ("a", n, self.type())
            self.expect("]")
        elif tok == "{":
            fields = []
            while not self.eat("}"):
                fields.append(self.type())
                self.eat(",")
            ty = ("s", tuple(fields))
        elif tok in ("void", "label", "metadata", "token"):
            ty = (tok,)
        elif tok.startswith("%") and tok in NAMED_TYPES:  # `%0 = type { ... }` (printf's hostcall structs)
            ty = NAMED_TYPES[tok]
        else:
            raise NotModelled(f"IR line {self.number}: type {tok!r}")
        if self.peek() == "(":  # a function type: skip its parameter list
            self._skip_parens()
        return ty

    # --- values --------------------------------------------------------------------------------------------------
    def value(self, ty):
        tok = self.next()
        if tok.startswith("%"):
            return ("%", tok[1:])
        if tok.startswith("@"):
            return ("g", tok[1:])
        if tok in ("undef", "poison"):  # a 4th field marks it (value None reads as 0 for who ignores poison)
            return ("c", ty, None, tok)
        if tok in ("zeroinitializer", "null"):
            return ("c", ty, None)
        if tok in ("true", "false"):
            return ("c", ty, int(tok == "true"))
        if tok == "splat":
            self.expect("(")
            ety = self.type()
            inner = self.value(ety)
            self.expect(")")
            return ("c", ty, [_element(inner)] * ty[1])
        if tok == "<":
            items = []
            while not self.eat(">"):
                ety = self.type()
                items.append(_element(self.value(ety)))
                self.eat(",")
            return ("c", ty, items)
        if tok in CASTS or tok == "getelementptr":
            return self._constexpr(ty, tok)
        if ty[0] == "f":
            return ("c", ty, float_bits(tok, ty[1], self))
        if tok.lstrip("-").isdigit():
            return ("c", ty, int(tok))
        raise NotModelled(f"IR line {self.number}: value {tok!r}")

    def _constexpr(self, ty, op):
        self.skip_flags()
        self.expect("(")
        if op == "getelementptr":
            src = self.type()
            self.eat(",")
            operands = []
            while not self.eat(")"):
                oty = self.type()
                operands.append((oty, self.value(oty)))
                self.eat(",")
            return ("ce", ty, op, (src, operands))
        oty = self.type()
        inner = self.value(oty)
        self.expect("to")
        to = self.type()
        self.expect(")")
        return ("ce", to, op, (oty, inner))

    def typed_value(self):
        ty = self.type()
        self.skip_attrs()
        return ty, self.value(ty)


def _element(operand):
    """A vector constant's element: its value; None only for an undef or poison element (null or zero is 0)."""
    if operand[0] == "c" and operand[2] is None and len(operand) == 3:
        return 0
    return operand[2]


def float_bits(tok, kind, line=None) -> int:
    """The bit pattern of a float literal of LLVM's text form, in the type's own format."""
    bits = FLOAT_BITS[kind]
    if tok.startswith("f0x"):
        return int(tok[3:], 16)
    if tok.startswith("0x"):
        body = tok[2:]
        if body[0] in "KLMHR":
            if body[0] in "HR":
                return int(body[1:], 16)
            raise NotModelled(f"float literal {tok}")
        value = int(body, 16)  # LLVM writes half/float constants as the double with that value
        if kind == "double":
            return value
        return _from_double(struct.unpack("<d", struct.pack("<Q", value))[0], kind)
    if tok[1:] in ("inf",) or tok[1:].startswith(("nan", "qnan", "snan")):
        sign = tok[0] == "-"
        exp_bits = {16: 5, 32: 8, 64: 11}[bits] if kind != "bfloat" else 8
        mant = bits - 1 - exp_bits
        exponent = ((1 << exp_bits) - 1) << mant
        payload = 0
        if "(" in tok:
            payload = int(tok[tok.index("(") + 1:-1], 16)
        elif "qnan" in tok or "nan" in tok:
            payload = 1 << (mant - 1)
        if "snan" in tok and "(" not in tok:
            payload = 1 << (mant - 2)
        return (sign << (bits - 1)) | exponent | payload
    try:
        return _from_double(float(tok), kind)
    except ValueError:
        raise NotModelled(f"float literal {tok}") from None


def _from_double(value, kind):
    import numpy as np
    if kind == "double":
        return struct.unpack("<Q", struct.pack("<d", value))[0]
    if kind == "float":
        return int(np.array(value, np.float32).view(np.uint32))
    if kind == "half":
        return int(np.array(value, np.float16).view(np.uint16))
    return int(np.array(value, np.float32).view(np.uint32)) >> 16  # bfloat literals are exact


