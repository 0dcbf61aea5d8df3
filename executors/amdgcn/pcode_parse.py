"""Parser of AMD's ISA-guide pseudocode into a small syntax tree (``pcode_compile``/``pcode_expr`` compile it).

Why our own parser: the pseudocode is C-like with Verilog bits (``N'U(x)`` sized casts, ``8'0xff`` sized
literals, ``x[hi : lo]`` and ``x[base +: width]`` part selects, ``{ a, b }`` concatenation) and block words
(``if ... then / elsif / else / endif``, ``for i in a : b do ... endfor``, ``declare``, ``lambda``). tinygrad's
emulator (github tinygrad/tinygrad, test/mockgpu/amd/pcode.py) showed which constructs the CDNA table uses; we
adopted its inventory, not its code: this parser builds an untyped tree and leaves every meaning to the compiler,
so a construct it does not know is a ``ParseError`` naming it, never a guess.

Newlines and ``;`` end statements, except inside brackets; a lambda's parenthesised body is a statement list.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


class ParseError(ValueError):
    """The text is not pseudocode this parser knows (prose in the table, an unknown form)."""


# ---- syntax tree -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Ty:
    """A pseudocode type: kind u (unsigned), i (signed), b (bits), f (IEEE float), bf (bfloat16); width in bits."""
    kind: str
    bits: int

    @property
    def is_float(self) -> bool:
        return self.kind in ("f", "bf")

    def __str__(self) -> str:
        return f"{self.kind}{self.bits}"


def _node(name: str, fields: str, doc: str = ""):
    """A frozen syntax-tree node class (equality by value: the compiler compares subtrees)."""
    return dataclass(frozen=True)(type(name, (), {"__annotations__": dict.fromkeys(fields.split(), object),
                                                  "__doc__": doc}))


Num = _node("Num", "value ty", "a literal, typed as C types it")
Name = _node("Name", "id", "a register, temporary, constant or mode field ('WAVE_MODE.IEEE')")
View = _node("View", "expr ty", "x.u32: the bits of x seen as a type")
Index = _node("Index", "expr index", "x[i]: a bit, an array element, a lane's bit")
Slice = _node("Slice", "expr hi lo", "x[hi : lo]; lo > hi (constants) means the bits reversed")
PartSel = _node("PartSel", "expr base width", "x[base +: width]")
Cast = _node("Cast", "ty expr", "32'I(x)")
Call = _node("Call", "name args")
Unary = _node("Unary", "op expr")
Binary = _node("Binary", "op left right")
Ternary = _node("Ternary", "cond then other")
Concat = _node("Concat", "items", "{ hi, ..., lo }")
Mem = _node("Mem", "addr", "MEM[addr], typed by an enclosing View")
Assign = _node("Assign", "targets op value", "t1 = t2 = value; op is '=' or '+=', ...")
If = _node("If", "branches orelse", "branches: ((cond, body), ...)")
For = _node("For", "var lo hi body")
Declare = _node("Declare", "name ty count", "count: an array's length, or None")
Lambda = _node("Lambda", "name params body")
Return = _node("Return", "expr")
Break = _node("Break", "")
ExprStmt = _node("ExprStmt", "expr")


# ---- tokens ------------------------------------------------------------------------------------------------
_TOKEN = re.compile(r"""
    (?P<comment>//[^\n]*) | (?P<nl>\n) | (?P<ws>[ \t\r]+) | (?P<string>"[^"\n]*")
  | (?P<size>\d+')
  | (?P<num>0[xX][0-9a-fA-F]+(?:ULL|LL|UL|U|L)? | \d+\.\d+[Ff]? | \d+(?:ULL|LL|UL|U|L|F)?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>\+:|-:|\*\*|<<|>>|<=|>=|==|!=|<>|&&|\|\||\+=|-=|\*=|\|=|&=|\^=|[-+*/%&|^~!<>=?:;,.()\[\]{}])
""", re.X)
_TYPE = re.compile(r"^(u|i|b|f|bf|fp)(\d+)$")
_ASSIGN_OPS = ("=", "+=", "-=", "*=", "|=", "&=", "^=")
_BINARY = [("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!=", "<>"), ("<", "<=", ">", ">="), ("<<", ">>"),
           ("+", "-"), ("*", "/", "%")]
_ENDERS = {"elsif", "else", "endif", "endfor"}


def type_of_suffix(name: str) -> Ty | None:
    """.u32 -> Ty('u', 32); fp8/bf8-style formats are plain bits here (their conversions are not modelled)."""
    if name == "bf16":
        return Ty("bf", 16)
    m = _TYPE.match(name)
    if not m:
        return None
    kind, bits = m.group(1), int(m.group(2))
    return Ty("b" if kind in ("fp", "bf") else kind, bits)


def tokenize(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise ParseError(f"unexpected character {text[pos]!r}")
        pos = m.end()
        kind = m.lastgroup
        if kind in ("comment", "ws"):
            continue
        out.append((kind, m.group()))
    out.append(("eof", ""))
    return out


def _int_literal(text: str) -> Num:
    """C's rules for an integer constant's type (hex may be unsigned; U and LL suffixes)."""
    body = text.rstrip("ULul")
    suffix = text[len(body):].upper()
    value = int(body, 16) if body[:2].lower() == "0x" else int(body)
    unsigned = "U" in suffix or (body[:2].lower() == "0x" and value >= 2 ** 31)
    wide = "L" in suffix or value >= 2 ** 32 or (not unsigned and value >= 2 ** 31)
    if wide and "U" not in suffix and body[:2].lower() == "0x" and value >= 2 ** 63:
        unsigned = True
    return Num(value, Ty("u" if unsigned else "i", 64 if wide else 32))


class Parser:
    def __init__(self, text: str):
        self.toks = tokenize(text)
        self.pos = 0
        self.nest = 0  # >0 inside (), [] or {} of an expression: newlines do not end statements there

    # -- token helpers --
    def peek(self, ahead: int = 0) -> tuple[str, str]:
        i = self.pos
        while True:
            if self.nest and self.toks[i][0] == "nl":
                i += 1
                continue
            if ahead == 0:
                return self.toks[i]
            ahead, i = ahead - 1, i + 1

    def take(self) -> tuple[str, str]:
        while self.nest and self.toks[self.pos][0] == "nl":
            self.pos += 1
        tok = self.toks[self.pos]
        self.pos += 1
        return tok

    def at(self, value: str) -> bool:
        kind, text = self.peek()
        return text == value and kind in ("op", "ident")

    def expect(self, value: str) -> None:
        kind, text = self.take()
        if text != value:
            raise ParseError(f"expected {value!r}, got {text!r}")

    def open(self, value: str) -> None:
        self.expect(value)
        self.nest += 1

    def close(self, value: str) -> None:
        self.nest -= 1
        self.expect(value)

    # -- statements --
    def program(self) -> tuple:
        body = self.block()
        if self.peek()[0] != "eof":
            raise ParseError(f"unexpected {self.peek()[1]!r}")
        return body

    def block(self) -> tuple:
        stmts = []
        while True:
            while self.peek()[0] == "nl" or self.at(";"):
                self.take()
            kind, text = self.peek()
            if kind == "eof" or (kind == "ident" and text in _ENDERS) or text == ")":
                return tuple(stmts)
            stmts.append(self.statement())

    def statement(self):
        kind, text = self.peek()
        if kind == "string":
            raise ParseError(f"prose in the pseudocode: {text}")
        if kind == "ident" and text == "declare":
            self.take()
            name = self.take()[1]
            self.expect(":")
            ty = self.sized_type()
            count = None
            if self.at("["):
                self.take()
                count = int(self.take()[1])
                self.expect("]")
            return Declare(name, ty, count)
        if kind == "ident" and text == "if":
            return self.if_statement()
        if kind == "ident" and text == "for":
            self.take()
            var = self.take()[1]
            self.expect("in")
            lo = self.expr()
            self.expect(":")
            hi = self.expr()
            self.expect("do")
            body = self.block()
            self.expect("endfor")
            return For(var, lo, hi, body)
        if kind == "ident" and text == "break":
            self.take()
            return Break()
        if kind == "ident" and text == "return":
            self.take()
            return Return(self.expr())
        if kind == "ident" and self.peek(1)[1] == "=" and self.peek(2)[1] == "lambda":
            return self.lambda_statement()
        first = self.expr()
        targets = [first]
        while self.peek()[1] in _ASSIGN_OPS:
            op = self.take()[1]
            value = self.expr()
            if op == "=" and self.peek()[1] == "=":
                targets.append(value)
                continue
            return Assign(tuple(targets), op, value)
        return ExprStmt(first)

    def if_statement(self) -> If:
        branches, orelse = [], ()
        self.expect("if")
        while True:
            cond = self.expr()
            self.expect("then")
            branches.append((cond, self.block()))
            word = self.take()[1]
            if word == "elsif":
                continue
            if word == "else":
                orelse = self.block()
                word = self.take()[1]
            if word != "endif":
                raise ParseError(f"expected endif, got {word!r}")
            return If(tuple(branches), orelse)

    def lambda_statement(self) -> Lambda:
        name = self.take()[1]
        self.expect("=")
        self.expect("lambda")
        self.open("(")
        params = []
        while not self.at(")"):
            params.append(self.take()[1])
            if self.at(","):
                self.take()
        self.close(")")
        self.expect("(")
        saved, self.nest = self.nest, 0
        body = self.block()
        self.nest = saved
        self.expect(")")
        return Lambda(name, tuple(params), body)

    def sized_type(self) -> Ty:
        kind, text = self.take()
        if kind != "size":
            raise ParseError(f"expected a sized type, got {text!r}")
        letter = self.take()[1]
        return _sized(letter, int(text[:-1]))

    # -- expressions --
    def expr(self):
        cond = self.binary(0)
        if self.at("?"):
            self.take()
            then = self.expr()
            self.expect(":")
            return Ternary(cond, then, self.expr())
        return cond

    def binary(self, level: int):
        if level == len(_BINARY):
            return self.power()
        left = self.binary(level + 1)
        while self.peek()[0] == "op" and self.peek()[1] in _BINARY[level]:
            op = self.take()[1]
            left = Binary(op, left, self.binary(level + 1))
        return left

    def power(self):
        base = self.unary()
        if self.at("**"):
            self.take()
            return Binary("**", base, self.power())
        return base

    def unary(self):
        if self.peek()[0] == "op" and self.peek()[1] in ("-", "+", "~", "!"):
            op = self.take()[1]
            return Unary(op, self.unary())
        return self.postfix(self.primary())

    def postfix(self, node):
        while True:
            if self.at("."):
                self.take()
                field = self.take()[1]
                ty = type_of_suffix(field)
                if ty is None:
                    if not isinstance(node, Name):
                        raise ParseError(f"field .{field} of an expression")
                    node = Name(f"{node.id}.{field}")
                else:
                    node = View(node, ty)
            elif self.at("["):
                self.open("[")
                first = self.expr()
                if self.at(":"):
                    self.take()
                    node = Slice(node, first, self.expr())
                elif self.at("+:"):
                    self.take()
                    node = PartSel(node, first, self.expr())
                else:
                    node = Index(node, first)
                self.close("]")
            else:
                return node

    def primary(self):
        kind, text = self.take()
        if kind == "num":
            if "." in text or (text[-1] in "Ff" and not text.lower().startswith("0x")):
                return Num(float(text.rstrip("Ff")), Ty("f", 32 if text[-1] in "Ff" else 64))
            return _int_literal(text)
        if kind == "size":
            return self.sized(int(text[:-1]))
        if kind == "op" and text == "(":
            self.nest += 1
            inner = self.expr()
            self.close(")")
            return inner
        if kind == "op" and text == "{":
            self.nest += 1
            items = [self.expr()]
            while self.at(","):
                self.take()
                items.append(self.expr())
            self.close("}")
            return Concat(tuple(items))
        if kind == "ident":
            if text == "MEM" and self.at("["):
                self.open("[")
                addr = self.expr()
                self.close("]")
                return Mem(addr)
            if self.at("("):
                self.open("(")
                args = []
                while not self.at(")"):
                    args.append(self.expr())
                    if self.at(","):
                        self.take()
                self.close(")")
                return Call(text, tuple(args))
            return Name(text)
        raise ParseError(f"unexpected {text!r}")

    def sized(self, bits: int):
        """After N': a cast N'U(x) / N'BF(x), or a sized literal N'5 / N'0x1f / N'1.0 / N'-1."""
        kind, text = self.peek()
        if kind == "ident" and self.peek(1)[1] == "(":
            self.take()
            self.open("(")
            inner = self.expr()
            self.close(")")
            return Cast(_sized(text, bits), inner)
        neg = False
        if text == "-":
            self.take()
            neg = True
        kind, text = self.take()
        if kind != "num":
            raise ParseError(f"bad sized literal {bits}'{text}")
        if "." in text:
            value = -float(text.rstrip("Ff")) if neg else float(text.rstrip("Ff"))
            return Num(value, Ty("f", bits))
        value = _int_literal(text).value
        return Num(-value if neg else value, Ty("u" if text.upper().endswith("U") else "b", bits))


def _sized(letter: str, bits: int) -> Ty:
    kinds = {"U": "u", "I": "i", "B": "b", "F": "f", "BF": "bf"}
    if letter not in kinds:
        raise ParseError(f"unknown type letter {bits}'{letter}")
    return Ty(kinds[letter], bits)


def parse(text: str) -> tuple:
    """The statement list of one instruction's pseudocode."""
    return Parser(text).program()
