//===- Pragma.cpp - Parsing clause tokens against the grammar tables --------===//
#include "Pragma.h"

#include "clang/Basic/SourceManager.h"

#include <algorithm>
#include <climits>
#include <optional>

using namespace clang;

namespace nanort {

void DiagSink::report(DiagId Id, SourceLocation Loc, const DiagArgs &Args) {
  SourceLocation FileLoc = SM.getFileLoc(Loc);
  std::pair<FileID, unsigned> D = SM.getDecomposedLoc(FileLoc);
  std::string File;
  if (OptionalFileEntryRef FE = SM.getFileEntryRefForID(D.first))
    File = FE->getName().str();
  StoredDiag S;
  S.File = File;
  S.Offset = D.second;
  S.Message = formatDiag(Id, Args);
  S.Severity = diagSeverity(Id);
  if (S.Severity == DiagSeverity::Error)
    ++Errors;
  Diags.push_back(S);
}

void DiagSink::reportFix(DiagId Id, SourceLocation Loc, const DiagArgs &Args, unsigned TokLength,
                         const std::string &Replacement) {
  report(Id, Loc, Args);
  StoredDiag &D = Diags.back();
  D.HasFix = true;
  D.FixLength = TokLength;
  D.FixText = Replacement;
}

namespace {
std::string dimension(size_t Dim, size_t Dims) {
  return Dims > 1 ? " in dimension " + std::to_string(Dim + 1) : "";
}
} // namespace

std::string sectionLengthMessage(size_t Dim, size_t Dims, const std::string &Value) {
  return "the section's length" + dimension(Dim, Dims) + " is " + Value;
}

std::string sectionStartMessage(size_t Dim, size_t Dims, BaseKind Kind, const std::string &Base,
                                const std::string &Start, const std::string &Offset,
                                const std::string &Length) {
  std::string M = "the section starts at index " + Start + dimension(Dim, Dims);
  if (Dim == 1)
    return M + ", before the first element of a row";
  if (Kind == BaseKind::Array)
    return M + ", outside the array " + Base;
  M += ", before " + Base + "[0]";
  if (Dims == 1 && Kind != BaseKind::Other) // a pointer may point into a larger array
    M += " (to name memory before a pointer, write (" + Base + " - " + Offset + ")[0;" +
         Length + "])";
  return M;
}

std::string shapeSizeMessage(size_t Dim, size_t Dims, const std::string &Value) {
  return "the shape's size" + dimension(Dim, Dims) + " is " + Value;
}

std::string spellTokens(const Toks &T) {
  auto Alnum = [](const Tok &K) {
    return !K.Text.empty() && (isalnum((unsigned char)K.Text[0]) || K.Text[0] == '_') &&
           (isalnum((unsigned char)K.Text.back()) || K.Text.back() == '_');
  };
  std::string S;
  for (size_t I = 0; I < T.size(); ++I) {
    if (I > 0) {
      const Tok &P = T[I - 1], &K = T[I];
      bool Space;
      if (P.Loc.isValid() && K.Loc.isValid() && P.Loc != K.Loc)
        Space = K.Loc != P.Loc.getLocWithOffset(P.Text.size());
      else // _Pragma("..."): every token has the location of the _Pragma
        Space = Alnum(P) && Alnum(K);
      if (Space)
        S += ' ';
    }
    S += T[I].Text;
  }
  return S;
}

std::string joinTokens(const Toks &T) {
  std::string S;
  for (const Tok &K : T) {
    if (!S.empty())
      S += ' ';
    S += K.Text;
  }
  return S;
}

namespace {

bool isOpen(tok::TokenKind K) { return K == tok::l_paren || K == tok::l_square || K == tok::l_brace; }
bool isClose(tok::TokenKind K) {
  return K == tok::r_paren || K == tok::r_square || K == tok::r_brace;
}

// An identifier or a keyword (label(inline), critical(default) name things too).
bool isWord(const Tok &K) {
  if (K.Text.empty() || !(isalpha((unsigned char)K.Text[0]) || K.Text[0] == '_'))
    return false;
  for (char C : K.Text)
    if (!(isalnum((unsigned char)C) || C == '_'))
      return false;
  return true;
}

// Splits T at top-level commas.
std::vector<Toks> splitCommas(const Toks &T) {
  std::vector<Toks> Parts(1);
  int Depth = 0;
  for (const Tok &K : T) {
    if (isOpen(K.Kind))
      ++Depth;
    else if (isClose(K.Kind))
      --Depth;
    if (Depth == 0 && K.Kind == tok::comma) {
      Parts.emplace_back();
      continue;
    }
    Parts.back().push_back(K);
  }
  return Parts;
}

// Index of the bracket closing T[Open], or T.size().
size_t matching(const Toks &T, size_t Open) {
  int Depth = 0;
  for (size_t I = Open; I < T.size(); ++I) {
    if (isOpen(T[I].Kind))
      ++Depth;
    else if (isClose(T[I].Kind) && --Depth == 0)
      return I;
  }
  return T.size();
}

class Parser {
public:
  Parser(Pragma &P, DiagSink &Diags, const MacroLookup *Macros)
      : P(P), Diags(Diags), Macros(Macros) {}

  // Clause: what messages show before the item, "in(" or "depend(in: ". Depend: x[a:n] is a
  // start and a length (OpenMP), not a start and an included end (OmpSs-1).
  bool parseDepItem(const Toks &T, AccessMode Mode, const std::string &Clause, bool Depend,
                    std::vector<DepItem> &Out);
  bool parseDepList(const Toks &T, SourceLocation Loc, AccessMode Mode, const std::string &Clause,
                    bool Depend, std::vector<DepItem> &Out);
  bool parseMultidependence(const Toks &T, AccessMode Mode, const std::string &Clause,
                            bool Depend, std::vector<DepItem> &Out);
  bool parseIterator(const Toks &T, DepIterator &It);
  bool parseClause(Clause &C, const Toks &Arg, bool HasParens, SourceLocation ParenLoc);

private:
  Pragma &P;
  DiagSink &Diags;
  const MacroLookup *Macros;
  bool checkConstants(DepItem &D);
  bool fail(DiagId Id, SourceLocation Loc, const DiagArgs &Args = {}) {
    Diags.report(Id, Loc, Args);
    return false;
  }
};

// The top-level separators of the bracket group R[Open..Close]: ';' and the ':' that no '?'
// claims (x[c ? a : b] is a subscript, x[c ? a : b : e] a section).
std::vector<size_t> separators(const Toks &R, size_t Open, size_t Close) {
  std::vector<size_t> Seps;
  int Depth = 0, Pending = 0;
  for (size_t K = Open + 1; K < Close; ++K) {
    if (isOpen(R[K].Kind))
      ++Depth;
    else if (isClose(R[K].Kind))
      --Depth;
    else if (Depth != 0)
      continue;
    else if (R[K].Kind == tok::question)
      ++Pending;
    else if (R[K].Kind == tok::colon && Pending > 0)
      --Pending;
    else if (R[K].Kind == tok::semi || R[K].Kind == tok::colon)
      Seps.push_back(K);
  }
  return Seps;
}

// An integer constant written with literals, object-like macros, parentheses and the
// arithmetic operators: enough to see x[0;-5] or x[-N;8] at compile time. Anything else
// (names of variables, casts, unsigned literals, overflow) is not folded.
class ConstFolder {
public:
  explicit ConstFolder(const MacroLookup *Macros) : Macros(Macros) {}

  std::optional<long long> fold(const Toks &T) {
    E.clear();
    if (!expand(T, 0))
      return std::nullopt;
    Pos = 0;
    OK = true;
    long long V = shift();
    if (!OK || Pos != E.size())
      return std::nullopt;
    return V;
  }

private:
  const MacroLookup *Macros;
  Toks E;
  size_t Pos = 0;
  bool OK = true;

  bool expand(const Toks &T, int Depth) {
    if (Depth > 16)
      return false;
    for (const Tok &K : T) {
      if (K.Kind == tok::identifier) {
        Toks R;
        if (!Macros || !(*Macros)(K.Text, R) || R.empty() || !expand(R, Depth + 1))
          return false;
        continue;
      }
      E.push_back(K);
    }
    return true;
  }
  bool is(tok::TokenKind K) const { return Pos < E.size() && E[Pos].Kind == K; }
  long long fail() {
    OK = false;
    return 0;
  }
  long long shift() {
    long long V = additive();
    while (OK && (is(tok::lessless) || is(tok::greatergreater))) {
      bool Left = is(tok::lessless);
      ++Pos;
      long long R = additive();
      if (R < 0 || R > 62 || V < 0)
        return fail();
      if (Left) {
        if (V > (LLONG_MAX >> R))
          return fail();
        V <<= R;
      } else {
        V >>= R;
      }
    }
    return V;
  }
  long long additive() {
    long long V = multiplicative();
    while (OK && (is(tok::plus) || is(tok::minus))) {
      bool Plus = is(tok::plus);
      ++Pos;
      long long R = multiplicative();
      if (Plus ? __builtin_add_overflow(V, R, &V) : __builtin_sub_overflow(V, R, &V))
        return fail();
    }
    return V;
  }
  long long multiplicative() {
    long long V = unary();
    while (OK && (is(tok::star) || is(tok::slash) || is(tok::percent))) {
      tok::TokenKind Op = E[Pos++].Kind;
      long long R = unary();
      if (Op == tok::star) {
        if (__builtin_mul_overflow(V, R, &V))
          return fail();
      } else if (R == 0 || (V == LLONG_MIN && R == -1)) {
        return fail();
      } else {
        V = Op == tok::slash ? V / R : V % R;
      }
    }
    return V;
  }
  long long unary() {
    if (is(tok::plus)) {
      ++Pos;
      return unary();
    }
    if (is(tok::minus)) {
      ++Pos;
      long long V = unary();
      return V == LLONG_MIN ? fail() : -V;
    }
    if (is(tok::tilde)) {
      ++Pos;
      return ~unary();
    }
    if (is(tok::l_paren)) {
      ++Pos;
      long long V = shift();
      if (!is(tok::r_paren))
        return fail();
      ++Pos;
      return V;
    }
    if (is(tok::numeric_constant))
      return literal(E[Pos++].Text);
    return fail();
  }
  // Decimal, octal, hexadecimal or binary, with digit separators and l/ll suffixes.
  long long literal(std::string Text) {
    Text.erase(std::remove(Text.begin(), Text.end(), '\''), Text.end());
    while (!Text.empty() && (Text.back() == 'l' || Text.back() == 'L'))
      Text.pop_back();
    unsigned Base = 10;
    size_t I = 0;
    if (Text.size() > 2 && Text[0] == '0' && (Text[1] == 'x' || Text[1] == 'X'))
      Base = 16, I = 2;
    else if (Text.size() > 2 && Text[0] == '0' && (Text[1] == 'b' || Text[1] == 'B'))
      Base = 2, I = 2;
    else if (Text.size() > 1 && Text[0] == '0')
      Base = 8, I = 1;
    if (I == Text.size())
      return Text == "0" ? 0 : fail();
    long long V = 0;
    for (; I < Text.size(); ++I) {
      char C = Text[I];
      unsigned D = isdigit((unsigned char)C)   ? C - '0'
                   : isxdigit((unsigned char)C) ? (tolower(C) - 'a' + 10)
                                               : 99;
      if (D >= Base) // an unsigned or floating literal, or a suffix not folded
        return fail();
      if (__builtin_mul_overflow(V, (long long)Base, &V) ||
          __builtin_add_overflow(V, (long long)D, &V))
        return fail();
    }
    return V;
  }
};

// Whether a base needs parentheses before a subscript in a message: x, s.f, p->a[i], (x + 1)
// do not; *pp does.
bool postfixBase(const Toks &B) {
  int Depth = 0;
  for (const Tok &K : B) {
    if (isOpen(K.Kind)) {
      ++Depth;
    } else if (isClose(K.Kind)) {
      --Depth;
    } else if (Depth == 0 && K.Kind != tok::identifier && K.Kind != tok::kw_this &&
               K.Kind != tok::period && K.Kind != tok::arrow && K.Kind != tok::coloncolon) {
      return false;
    }
  }
  return true;
}

bool Parser::parseDepItem(const Toks &T, AccessMode Mode, const std::string &Clause,
                          bool Depend, std::vector<DepItem> &Out) {
  DepItem D;
  D.Mode = Mode;
  D.Loc = T.front().Loc;
  D.Written = Clause + spellTokens(T) + ")";
  // OmpSs multidependences: {v[i;BS], i=0;n} (one item per value of the iterator).
  if (T.front().Kind == tok::l_brace)
    return parseMultidependence(T, Mode, Clause, Depend, Out);
  size_t I = 0;
  // A section of a shaped expression: ([n][m]x)[a;k]. The parentheses go, the sections apply
  // to the shape's dimensions (the lowering indexes x by the shape, see emitItem).
  Toks Sectioned; // T without those parentheses: [n][m]x[a;k]
  size_t ParenClose = T.size();
  if (T.size() > 1 && T[0].Kind == tok::l_paren && T[1].Kind == tok::l_square) {
    ParenClose = matching(T, 0);
    if (ParenClose + 1 < T.size() && T[ParenClose + 1].Kind == tok::l_square) {
      Sectioned.assign(T.begin() + 1, T.begin() + ParenClose);
      Sectioned.insert(Sectioned.end(), T.begin() + ParenClose + 1, T.end());
    } else {
      ParenClose = T.size();
    }
  }
  const Toks &Item = Sectioned.empty() ? T : Sectioned;
  // Shaping: [n][m]x.
  while (I < Item.size() && Item[I].Kind == tok::l_square) {
    size_t Close = matching(Item, I);
    if (Close == Item.size())
      return fail(DiagId::ShapeUnclosed, Item[I].Loc);
    I = Close + 1;
  }
  const size_t ShapeEnd = I;
  // A comma directly inside '[]' is the comma operator: x[0,n] is x[n], [n,m]x is [m]x. One
  // inside parentheses or braces (x[f(a, b)]) is the user's own.
  {
    std::vector<size_t> Open;
    for (size_t J = 0; J < Item.size(); ++J) {
      if (isOpen(Item[J].Kind)) {
        Open.push_back(J);
      } else if (isClose(Item[J].Kind)) {
        if (!Open.empty())
          Open.pop_back();
      } else if (Item[J].Kind == tok::comma && !Open.empty() &&
                 Item[Open.back()].Kind == tok::l_square) {
        if (Open.back() < ShapeEnd) {
          Diags.report(DiagId::ShapeComma, Item[J].Loc);
          if (!P.Operator)
            Diags.reportFix(DiagId::ShapeCommaFix, Item[J].Loc, {}, 1, "][");
        } else if (Depend) {
          Diags.report(DiagId::DependSubscriptComma, Item[J].Loc);
          if (!P.Operator)
            Diags.reportFix(DiagId::DependSubscriptCommaFix, Item[J].Loc, {}, 1, ":");
        } else {
          Diags.report(DiagId::SubscriptComma, Item[J].Loc);
          if (!P.Operator) {
            Diags.reportFix(DiagId::SubscriptCommaLengthFix, Item[J].Loc, {}, 1, ";");
            Diags.reportFix(DiagId::SubscriptCommaEndFix, Item[J].Loc, {}, 1, ":");
          }
        }
        return false;
      }
    }
  }
  if (ShapeEnd == Item.size())
    return fail(DiagId::ShapeWithoutExpression, Item.back().Loc);
  for (I = 0; I < ShapeEnd;) {
    size_t Close = matching(Item, I);
    Toks Dim(Item.begin() + I + 1, Item.begin() + Close);
    if (Dim.empty())
      return fail(DiagId::ShapeWithoutSize, Item[I].Loc);
    std::vector<size_t> Seps = separators(Item, I, Close);
    if (!Seps.empty())
      return fail(DiagId::ShapeSeparator, Item[Seps[0]].Loc, {Item[Seps[0]].Text});
    D.Shape.push_back(Dim);
    I = Close + 1;
  }
  Toks Rest(Item.begin() + I, Item.end());

  // Trailing bracket groups: sections [a;n] / [a:b] or plain subscripts.
  struct Group {
    size_t Open, Close;
    bool IsSection;
  };
  std::vector<Group> Groups;
  {
    int Depth = 0;
    size_t Open = 0;
    for (size_t J = 0; J < Rest.size(); ++J) {
      if (isOpen(Rest[J].Kind)) {
        if (Depth++ == 0)
          Open = J;
      } else if (isClose(Rest[J].Kind)) {
        if (--Depth < 0)
          return fail(DiagId::Unbalanced, Rest[J].Loc, {Rest[J].Text});
        if (Depth == 0 && Rest[J].Kind == tok::r_square && Rest[Open].Kind == tok::l_square)
          Groups.push_back({Open, J, !separators(Rest, Open, J).empty()});
        else if (Depth == 0)
          Groups.clear(); // a call or parenthesis: earlier groups are not trailing
      } else if (Depth == 0) {
        Groups.clear();
      }
    }
    if (Depth != 0)
      return fail(DiagId::UnbalancedBrackets, Rest.back().Loc);
  }
  // Keep only the groups from the first section on.
  size_t First = Groups.size();
  for (size_t G = 0; G < Groups.size(); ++G)
    if (Groups[G].IsSection) {
      First = G;
      break;
    }
  size_t BaseEnd = Rest.size();
  if (First < Groups.size()) {
    BaseEnd = Groups[First].Open;
    for (size_t G = First; G < Groups.size(); ++G) {
      if (!Groups[G].IsSection)
        return fail(DiagId::SubscriptAfterSection, Rest[Groups[G].Open].Loc);
      std::vector<size_t> Seps = separators(Rest, Groups[G].Open, Groups[G].Close);
      if (Seps.size() > 1)
        return fail(Depend ? DiagId::DependSectionParts : DiagId::SectionParts,
                    Rest[Seps[1]].Loc);
      Section S;
      // OmpSs-1: x[a:b] includes b; depend() follows OpenMP: x[a:n] is a start and a length.
      S.Inclusive = Rest[Seps[0]].Kind == tok::colon && !Depend;
      S.Lower.assign(Rest.begin() + Groups[G].Open + 1, Rest.begin() + Seps[0]);
      S.Second.assign(Rest.begin() + Seps[0] + 1, Rest.begin() + Groups[G].Close);
      // x[;n] and x[:b] start at 0; x[a:] is not allowed (the size is unknown).
      if (S.Second.empty())
        return S.Inclusive ? fail(DiagId::SectionWithoutEnd, Rest[Groups[G].Close].Loc)
                           : fail(DiagId::SectionWithoutLength, Rest[Groups[G].Close].Loc,
                                  {Rest[Seps[0]].Text});
      S.Sep = Rest[Seps[0]];
      if (S.Lower.empty()) {
        S.Lower.push_back({tok::numeric_constant, "0", Rest[Groups[G].Open].Loc});
        S.ImplicitLower = true;
      }
      D.Sections.push_back(S);
    }
    if (D.Sections.size() > 2)
      return fail(DiagId::SectionDimensions, Rest[Groups[First].Open].Loc);
    if (!D.Shape.empty() && Sectioned.empty())
      return fail(DiagId::SectionOfShape, Rest[Groups[First].Open].Loc);
    if (!Sectioned.empty() && BaseEnd + (Item.size() - Rest.size()) != ParenClose - 1)
      return fail(DiagId::SectionInsideShape, Rest[Groups[First].Open].Loc);
    if (!Sectioned.empty() && D.Sections.size() > D.Shape.size())
      return fail(DiagId::SectionBeyondShape, Rest[Groups[First + D.Shape.size()].Open].Loc,
                  {std::to_string(D.Shape.size()), D.Shape.size() == 1 ? "" : "s"});
  }
  D.Base.assign(Rest.begin(), Rest.begin() + BaseEnd);
  if (D.Base.empty())
    return fail(DiagId::SectionWithoutBase, T.front().Loc);
  for (size_t J = 0; J < D.Base.size(); ++J)
    if (D.Base[J].Kind == tok::semi)
      return fail(DiagId::SemicolonInDependence, D.Base[J].Loc);
  D.BaseText = spellTokens(D.Base);
  if (!postfixBase(D.Base))
    D.BaseText = "(" + D.BaseText + ")";
  // The variable the item is about: the first identifier not behind '.' or '->'.
  for (size_t J = 0; J < D.Base.size(); ++J) {
    if (D.Base[J].Kind == tok::identifier) {
      D.BaseVar = D.Base[J].Text;
      break;
    }
    if (D.Base[J].Kind != tok::star && D.Base[J].Kind != tok::amp &&
        D.Base[J].Kind != tok::l_paren)
      break;
  }
  if (!checkConstants(D))
    return false;
  Out.push_back(std::move(D));
  return true;
}

// {items, i=lower;length} and the other iterator forms (DepIterator): the items are parsed as
// usual (sections, shapes), each with the iterators, outer first, after those of an enclosing
// multidependence.
bool Parser::parseMultidependence(const Toks &T, AccessMode Mode, const std::string &Clause,
                                  bool Depend, std::vector<DepItem> &Out) {
  const std::string Written = Clause + spellTokens(T) + ")";
  size_t Close = matching(T, 0);
  if (Close == T.size())
    return fail(DiagId::MultidependenceUnclosed, T.front().Loc);
  if (Close + 1 != T.size())
    return fail(DiagId::MultidependenceTrailing, T[Close + 1].Loc, {T[Close + 1].Text});
  std::vector<Toks> Parts = splitCommas(Toks(T.begin() + 1, T.begin() + Close));
  std::vector<Toks> Items;
  std::vector<DepIterator> Iters;
  for (const Toks &Part : Parts) {
    if (Part.empty())
      return fail(DiagId::MultidependenceEmptyItem, T.front().Loc);
    bool IsIterator = Part.size() >= 2 && Part[0].Kind == tok::identifier &&
                      Part[1].Kind == tok::equal;
    if (!IsIterator) {
      if (!Iters.empty())
        return fail(DiagId::MultidependenceItemAfterIterator, Part.front().Loc);
      Items.push_back(Part);
      continue;
    }
    if (Items.empty())
      return fail(DiagId::MultidependenceIteratorFirst, Part.front().Loc);
    DepIterator It;
    if (!parseIterator(Part, It))
      return false;
    Iters.push_back(std::move(It));
  }
  if (Iters.empty())
    return fail(DiagId::MultidependenceWithoutIterator, T.front().Loc);
  for (const Toks &Item : Items) {
    size_t First = Out.size();
    if (!parseDepItem(Item, Mode, Clause, Depend, Out))
      return false;
    for (size_t K = First; K < Out.size(); ++K) {
      Out[K].Iters.insert(Out[K].Iters.begin(), Iters.begin(), Iters.end());
      Out[K].Written = Written;
      Out[K].Loc = T.front().Loc;
    }
  }
  return true;
}

bool Parser::parseIterator(const Toks &T, DepIterator &It) {
  It.Name = T[0].Text;
  It.Loc = T[0].Loc;
  Toks R(T.begin() + 2, T.end());
  if (R.empty())
    return fail(DiagId::IteratorWithoutValues, T[1].Loc, {It.Name});
  if (R.front().Kind == tok::l_brace) {
    if (matching(R, 0) + 1 != R.size())
      return fail(DiagId::IteratorForm, R.front().Loc, {It.Name});
    for (const Toks &V : splitCommas(Toks(R.begin() + 1, R.end() - 1))) {
      if (V.empty())
        return fail(DiagId::IteratorEmptyValue, R.front().Loc, {It.Name});
      It.Values.push_back(V);
    }
    return true;
  }
  // The separators at the top level, as in a section: ';' and the ':' that no '?' claims.
  Toks W;
  W.push_back({tok::l_paren, "(", R.front().Loc});
  W.insert(W.end(), R.begin(), R.end());
  W.push_back({tok::r_paren, ")", R.back().Loc});
  std::vector<size_t> Seps = separators(W, 0, W.size() - 1);
  if (Seps.empty() || Seps.size() > 2 || (Seps.size() == 2 && W[Seps[1]].Kind != tok::colon))
    return fail(DiagId::IteratorForm, Seps.size() > 2 ? W[Seps[2]].Loc : R.front().Loc,
                {It.Name});
  It.Length = W[Seps[0]].Kind == tok::semi;
  It.Lower.assign(W.begin() + 1, W.begin() + Seps[0]);
  size_t SecondEnd = Seps.size() == 2 ? Seps[1] : W.size() - 1;
  It.Second.assign(W.begin() + Seps[0] + 1, W.begin() + SecondEnd);
  if (Seps.size() == 2)
    It.Step.assign(W.begin() + Seps[1] + 1, W.end() - 1);
  if (It.Lower.empty())
    return fail(DiagId::IteratorWithoutFirst, W[Seps[0]].Loc, {It.Name});
  if (It.Second.empty())
    return fail(It.Length ? DiagId::IteratorWithoutLength : DiagId::IteratorWithoutEnd,
                W[Seps[0]].Loc, {It.Name});
  if (Seps.size() == 2 && It.Step.empty())
    return fail(DiagId::IteratorWithoutStep, W[Seps[1]].Loc, {It.Name});
  return true;
}

// Sizes and lengths written as constants: a negative one is an error now, with the message
// that the program would otherwise print when it creates the task. Constant starts are
// checked by the lowering, which knows whether the base is an array or a pointer.
bool Parser::checkConstants(DepItem &D) {
  ConstFolder F(Macros);
  for (size_t I = 0; I < D.Shape.size(); ++I) {
    D.ConstShape.push_back(F.fold(D.Shape[I]));
    if (D.ConstShape.back() && *D.ConstShape.back() < 0)
      return fail(DiagId::ConstantItem, D.Shape[I].front().Loc,
                  {D.Written, shapeSizeMessage(I, D.Shape.size(),
                                               std::to_string(*D.ConstShape.back()))});
  }
  for (size_t I = 0; I < D.Sections.size(); ++I) {
    Section &S = D.Sections[I];
    S.ConstLower = F.fold(S.Lower);
    std::optional<long long> Second = F.fold(S.Second);
    if (Second && !S.Inclusive) {
      S.ConstLength = Second;
    } else if (Second && S.ConstLower) {
      long long L;
      if (!__builtin_sub_overflow(*Second, *S.ConstLower, &L) &&
          !__builtin_add_overflow(L, 1LL, &L))
        S.ConstLength = L;
    }
    if (S.ConstLength && *S.ConstLength < 0)
      return fail(DiagId::ConstantItem, S.Second.front().Loc,
                  {D.Written, sectionLengthMessage(I, D.Sections.size(),
                                                   std::to_string(*S.ConstLength))});
  }
  return true;
}

bool Parser::parseDepList(const Toks &T, SourceLocation Loc, AccessMode Mode,
                          const std::string &Clause, bool Depend, std::vector<DepItem> &Out) {
  bool OK = true;
  for (const Toks &Item : splitCommas(T)) {
    if (Item.empty()) {
      OK = fail(DiagId::EmptyListItem, Loc);
      continue;
    }
    OK &= parseDepItem(Item, Mode, Clause, Depend, Out);
  }
  return OK;
}

bool Parser::parseClause(Clause &C, const Toks &Arg, bool HasParens, SourceLocation ParenLoc) {
  const ClauseInfo &I = *C.Info;
  std::string Name = I.Spelling;
  if (I.Arg == ArgKind::None) {
    if (HasParens)
      return fail(DiagId::ClauseTakesNoArgument, ParenLoc, {Name});
    return true;
  }
  if (!HasParens) {
    if (I.Arg == ArgKind::OptionalExpr)
      return true;  // the clause alone: its expression taken as true
    return fail(DiagId::ClauseNeedsArgument, C.Loc, {Name});
  }
  if (Arg.empty())
    return fail(DiagId::ClauseEmptyArgument, ParenLoc, {Name});
  for (const Tok &K : Arg)
    if (K.Kind == tok::identifier)
      P.Identifiers.push_back(K.Text);
  switch (I.Arg) {
  case ArgKind::None:
    return true;
  case ArgKind::DepList:
    if (!parseDepList(Arg, ParenLoc, I.Mode, Name + "(", false, C.Deps))
      return false;
    if (I.Kind == ClauseKind::Inprivate) // the whole variable is copied into the task
      for (const DepItem &D : C.Deps)
        if (D.Base.size() != 1 || D.Base[0].Kind != tok::identifier || !D.Sections.empty() ||
            !D.Shape.empty() || !D.Iters.empty())
          return fail(DiagId::InprivateNotVariable, D.Loc,
                      {D.Written.substr(Name.size() + 1, D.Written.size() - Name.size() - 2)});
    return true;
  case ArgKind::DependList: {
    AccessMode Mode;
    if (Arg.size() < 2 || Arg[1].Kind != tok::colon || !findDependMode(Arg[0].Text, Mode))
      return fail(DiagId::DependWithoutMode, Arg[0].Loc);
    Toks Rest(Arg.begin() + 2, Arg.end());
    if (Rest.empty())
      return fail(DiagId::DependWithoutList, Arg[1].Loc);
    return parseDepList(Rest, Arg[1].Loc, Mode, Name + "(" + Arg[0].Text + ": ", true, C.Deps);
  }
  case ArgKind::ReductionList: {
    // op: items, the operator one token (+, &&, min, a declared reduction's name).
    static const tok::TokenKind Ops[] = {tok::plus,  tok::minus,   tok::star,    tok::amp,
                                         tok::pipe,  tok::caret,   tok::ampamp,  tok::pipepipe};
    bool Known = Arg[0].Kind == tok::identifier;
    for (tok::TokenKind K : Ops)
      Known |= Arg[0].Kind == K;
    if (Arg.size() < 2 || Arg[1].Kind != tok::colon || !Known)
      return fail(DiagId::ReductionWithoutOperator, Arg[0].Loc, {Name});
    C.ReductionOp = Arg[0].Text;
    C.ReductionOpLoc = Arg[0].Loc;
    Toks Rest(Arg.begin() + 2, Arg.end());
    if (Rest.empty())
      return fail(DiagId::ReductionWithoutList, Arg[1].Loc, {Name});
    return parseDepList(Rest, Arg[1].Loc, AccessMode::Inout, Name + "(" + Arg[0].Text + ": ",
                        false, C.Deps);
  }
  case ArgKind::VarList: {
    // firstprivate(saved: list), OpenMP 6.0: a replayed task keeps the values of its
    // recording, which is what every replay here does (taskiter and taskgraph alike).
    Toks List = Arg;
    if (I.Kind == ClauseKind::Firstprivate && List.size() >= 2 && List[0].Text == "saved" &&
        List[1].Kind == tok::colon) {
      List.erase(List.begin(), List.begin() + 2);
      if (List.empty())
        return fail(DiagId::ExpectedVariable, ParenLoc, {Name});
    }
    for (const Toks &Item : splitCommas(List)) {
      if (Item.size() != 1 || Item[0].Kind != tok::identifier)
        return fail(DiagId::ExpectedVariable, Item.empty() ? ParenLoc : Item[0].Loc, {Name});
      C.Words.push_back(Item[0].Text);
      C.WordLocs.push_back(Item[0].Loc);
    }
    return true;
  }
  case ArgKind::Expr:
  case ArgKind::OptionalExpr:
    for (const Toks &Item : splitCommas(Arg))
      if (Item.empty())
        return fail(DiagId::ExpectedExpression, ParenLoc, {Name});
    C.Args.push_back(Arg);
    return true;
  case ArgKind::ExprList:
    for (const Toks &Item : splitCommas(Arg)) {
      if (Item.empty())
        return fail(DiagId::ExpectedExpression, ParenLoc, {Name});
      C.Args.push_back(Item);
    }
    return true;
  case ArgKind::Name:
    if (Arg.size() != 1 || (!isWord(Arg[0]) && Arg[0].Kind != tok::string_literal))
      return fail(DiagId::ExpectedName, Arg[0].Loc, {Name});
    C.Words.push_back(Arg[0].Kind == tok::string_literal
                          ? Arg[0].Text.substr(1, Arg[0].Text.size() - 2)
                          : Arg[0].Text);
    C.WordLocs.push_back(Arg[0].Loc);
    return true;
  case ArgKind::Path: {
    if (Arg.size() == 1 && Arg[0].Kind == tok::string_literal) {
      std::string Path = Arg[0].Text.substr(1, Arg[0].Text.size() - 2);
      if (Path.empty() || Arg[0].Text[0] != '"')
        return fail(DiagId::ExpectedFileName, Arg[0].Loc, {Name});
      C.Words.push_back(Path);
      C.WordLocs.push_back(Arg[0].Loc);
      return true;
    }
    // A bare name (kernels/saxpy.cl) comes as several tokens, written without spaces.
    std::string Path;
    for (size_t K = 0; K < Arg.size(); ++K) {
      if (Arg[K].Kind == tok::string_literal || Arg[K].Kind == tok::comma ||
          (K > 0 && Arg[K].Loc != Arg[K - 1].Loc.getLocWithOffset(Arg[K - 1].Text.size())))
        return fail(DiagId::BareFileName, Arg[K].Loc, {Name});
      Path += Arg[K].Text;
    }
    C.Words.push_back(Path);
    C.WordLocs.push_back(Arg[0].Loc);
    return true;
  }
  case ArgKind::Keyword:
  case ArgKind::KeywordList: {
    std::vector<Toks> Items = splitCommas(Arg);
    if (I.Arg == ArgKind::Keyword && Items.size() != 1)
      return fail(DiagId::ClauseTakesOneWord, Arg[0].Loc, {Name});
    std::string Words = I.Words;
    for (char &Ch : Words)
      if (Ch == '|')
        Ch = ',';
    for (const Toks &Item : Items) {
      if (Item.size() != 1 || !isOneOf(Item[0].Text, I.Words))
        return fail(DiagId::ExpectedKeyword, Item.empty() ? ParenLoc : Item[0].Loc,
                    {Words, Name});
      C.Words.push_back(Item[0].Text);
      C.WordLocs.push_back(Item[0].Loc);
    }
    return true;
  }
  }
  return true;
}

} // namespace

// declare reduction(name : type[, type...] : combiner) [initializer(expression)]: the
// combiner may hold '?:', so the first two ':' outside parentheses end the name and the types.
static void parseDeclare(Pragma &P, const Toks &T, SourceLocation EodLoc, DiagSink &Diags) {
  P.Valid = false;
  std::string Line = "'#pragma " + P.Namespace + " declare";
  if (T.empty() || T[0].Text != "reduction") {
    Diags.report(DiagId::UnsupportedDirective, T.empty() ? EodLoc : T[0].Loc,
                 {Line + (T.empty() ? "" : " " + T[0].Text) + "'"});
    return;
  }
  auto Fail = [&](SourceLocation L) {
    Diags.report(DiagId::DeclareReductionForm, L, {P.Namespace});
  };
  if (T.size() < 2 || T[1].Kind != tok::l_paren)
    return Fail(T[0].Loc);
  size_t Close = matching(T, 1);
  if (Close == T.size())
    return Fail(T[1].Loc);
  std::vector<size_t> Colons;
  int Depth = 0;
  for (size_t I = 2; I < Close; ++I) {
    if (isOpen(T[I].Kind))
      ++Depth;
    else if (isClose(T[I].Kind))
      --Depth;
    else if (T[I].Kind == tok::colon && Depth == 0 && Colons.size() < 2)
      Colons.push_back(I);
  }
  if (Colons.size() < 2 || Colons[0] != 3 || Colons[1] == Colons[0] + 1 ||
      Colons[1] + 1 == Close)
    return Fail(T[1].Loc);
  P.DeclName = T[2].Text;
  P.DeclNameLoc = T[2].Loc;
  Toks Types(T.begin() + Colons[0] + 1, T.begin() + Colons[1]);
  for (Toks &Ty : splitCommas(Types)) {
    if (Ty.empty())
      return Fail(T[1].Loc);
    P.DeclTypes.push_back(Ty);
  }
  P.Combiner.assign(T.begin() + Colons[1] + 1, T.begin() + Close);
  size_t I = Close + 1;
  if (I < T.size()) {
    if (T[I].Text != "initializer" || I + 1 >= T.size() || T[I + 1].Kind != tok::l_paren)
      return Fail(T[I].Loc);
    size_t End = matching(T, I + 1);
    if (End == T.size() || End + 1 != T.size() || End == I + 2)
      return Fail(T[I].Loc);
    P.Initializer.assign(T.begin() + I + 2, T.begin() + End);
  }
  P.Valid = true;
}

void parsePragma(Pragma &P, const Toks &T, SourceLocation EodLoc, DiagSink &Diags,
                 const MacroLookup *Macros) {
  if (P.Dir->Kind == DirectiveKind::Declare)
    return parseDeclare(P, T, EodLoc, Diags);
  Parser Pa(P, Diags, Macros);
  bool OK = true;
  size_t I = 0;
  // Combined taskloop forms: OmpSs-2's 'taskloop for', OpenMP's 'taskloop simd'.
  if (P.Dir->Kind == DirectiveKind::Taskloop && I < T.size() &&
      (T[I].Text == "for" || T[I].Text == "simd") &&
      (I + 1 == T.size() || T[I + 1].Kind != tok::l_paren)) {
    P.Combined = T[I].Text;
    P.DirSpelling += " " + P.Combined;
    ++I;
  }
  const std::string Dir = "'#pragma " + P.Namespace + " " + P.DirSpelling + "'";

  if (P.Dir->OptionalName && I < T.size() && T[I].Kind == tok::l_paren) {
    if (I + 2 < T.size() && isWord(T[I + 1]) && T[I + 2].Kind == tok::r_paren) {
      P.CriticalName = T[I + 1].Text;
      I += 3;
    } else {
      Diags.report(DiagId::CriticalName, T[I].Loc, {Dir});
      P.Valid = false;
      return;
    }
  }
  while (I < T.size()) {
    const Tok &Name = T[I];
    if (Name.Kind == tok::comma) { // commas between clauses are allowed
      ++I;
      continue;
    }
    if (Name.Kind == tok::string_literal || Name.Kind == tok::numeric_constant ||
        isOpen(Name.Kind) || isClose(Name.Kind) || Name.Text.empty() ||
        !(isalpha((unsigned char)Name.Text[0]) || Name.Text[0] == '_')) {
      Diags.report(DiagId::ExpectedClause, Name.Loc, {Name.Text});
      OK = false;
      break;
    }
    Clause C;
    C.Loc = Name.Loc;
    C.Info = findClause(Name.Text);
    ++I;
    // The argument, if any.
    Toks Arg;
    bool HasParens = false;
    SourceLocation ParenLoc;
    if (I < T.size() && T[I].Kind == tok::l_paren) {
      HasParens = true;
      ParenLoc = T[I].Loc;
      size_t Close = matching(T, I);
      if (Close == T.size()) {
        Diags.report(DiagId::ClauseUnclosed, EodLoc, {Name.Text});
        OK = false;
        break;
      }
      Arg.assign(T.begin() + I + 1, T.begin() + Close);
      I = Close + 1;
    }
    if (!C.Info) {
      Diags.report(DiagId::UnknownClause, Name.Loc, {Name.Text, Dir});
      OK = false;
      continue;
    }
    if (!(C.Info->AllowedOn & P.Dir->Mask)) {
      if (C.Info->Kind == ClauseKind::Implements) // a version names its device first
        Diags.report(DiagId::ImplementsOnTask, Name.Loc,
                     {P.Namespace, Arg.size() == 1 ? Arg[0].Text : std::string("f")});
      else
        Diags.report(DiagId::ClauseNotAllowed, Name.Loc, {Name.Text, Dir});
      OK = false;
      continue;
    }
    if (C.Info->Unsupported) {
      Diags.report(DiagId::ClauseUnsupported, Name.Loc, {Name.Text, C.Info->Unsupported});
      OK = false;
      continue;
    }
    for (const Clause &Prev : P.Clauses)
      if (Prev.Info->Kind == C.Info->Kind &&
          (C.Info->Arg == ArgKind::None || C.Info->Arg == ArgKind::Expr ||
           C.Info->Arg == ArgKind::OptionalExpr ||
           C.Info->Arg == ArgKind::Name || C.Info->Arg == ArgKind::Keyword ||
           C.Info->Arg == ArgKind::Path ||
           C.Info->Arg == ArgKind::KeywordList || C.Info->Kind == ClauseKind::Ndrange)) {
        Diags.report(DiagId::ClauseTwice, Name.Loc, {Name.Text});
        OK = false;
      }
    if (!Pa.parseClause(C, Arg, HasParens, ParenLoc)) {
      OK = false;
      continue;
    }
    P.Clauses.push_back(std::move(C));
  }
  P.Valid = OK;
}

} // namespace nanort
