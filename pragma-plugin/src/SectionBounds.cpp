//===- SectionBounds.cpp - Array sections that are very likely off by one --===//
//
// Warnings where an array section's bounds are very likely wrong by one (issue 19). In in(),
// out(), inout() and their relatives, x[a:b] includes x[b]; in depend(), x[a:n] is a start and
// a length. Mixing the two up is the common mistake, and it runs silently: the dependence
// covers one element too many (or a range of the wrong length), so tasks wait for each other
// where they need not, or not where they must. Only sections that are wrong whatever the
// program means are reported, so that correct code stays quiet:
//   - a section that runs past the end of an array whose size the plugin sees (int v[N], a VLA
//     or parameter declared int v[n], a shape [n]p), by constants or by the same expression
//     written as the size (in(v[0:n]) on int v[n]);
//   - in an inclusive section, an upper bound written as the start plus a number of elements
//     (in(x[i:i+BS]): BS+1 elements);
//   - in depend(), a length written as the start plus something (depend(in: x[i:i+BS])).
// Writing the section as start;length (x[i;BS+1]) says what is meant and is never reported.
//
//===----------------------------------------------------------------------===//
#include "LowererImpl.h"

using namespace clang;

namespace nanort {
namespace lowering {

namespace {

// An expression as written, without spaces: compared with another one written elsewhere.
std::string compact(const std::string &S) {
  std::string C;
  for (char Ch : S)
    if (!isspace((unsigned char)Ch))
      C += Ch;
  return C;
}
std::string compact(const Toks &T) {
  std::string C;
  for (const Tok &K : T)
    C += K.Text;
  return C;
}

bool isOpenTok(tok::TokenKind K) {
  return K == tok::l_paren || K == tok::l_square || K == tok::l_brace;
}
bool isCloseTok(tok::TokenKind K) {
  return K == tok::r_paren || K == tok::r_square || K == tok::r_brace;
}

// Whether T, at its top level, has only operators that bind at least as tightly as '*' (and
// names, literals, member accesses, calls and parentheses): then 'a + T' and 'T + 1' read as
// intended.
bool multiplicative(const Toks &T, size_t From = 0, size_t To = SIZE_MAX) {
  To = std::min(To, T.size());
  if (From >= To)
    return false;
  int Depth = 0;
  for (size_t I = From; I < To; ++I) {
    tok::TokenKind K = T[I].Kind;
    if (isOpenTok(K)) {
      ++Depth;
    } else if (isCloseTok(K)) {
      --Depth;
    } else if (Depth == 0 && K != tok::identifier && K != tok::numeric_constant && K != tok::star &&
               K != tok::slash && K != tok::percent && K != tok::period && K != tok::arrow &&
               K != tok::coloncolon && K != tok::kw_sizeof &&
               !(I == From && (K == tok::minus || K == tok::plus))) {
      return false;
    }
  }
  return Depth == 0;
}

// Whether T, at its top level, is a sum or product (no shift, comparison, bitwise, logical,
// conditional, assignment or comma operator): then 'T + 1' and 'T - 1' keep its meaning.
bool additive(const Toks &T) {
  int Depth = 0;
  for (const Tok &K : T) {
    if (isOpenTok(K.Kind))
      ++Depth;
    else if (isCloseTok(K.Kind))
      --Depth;
    else if (Depth == 0 && K.Kind != tok::identifier && K.Kind != tok::numeric_constant &&
             K.Kind != tok::star && K.Kind != tok::slash && K.Kind != tok::percent &&
             K.Kind != tok::plus && K.Kind != tok::minus && K.Kind != tok::period &&
             K.Kind != tok::arrow && K.Kind != tok::coloncolon && K.Kind != tok::kw_sizeof)
      return false;
  }
  return Depth == 0 && !T.empty();
}

bool sameTokens(const Toks &A, size_t AFrom, size_t ATo, const Toks &B) {
  if (ATo - AFrom != B.size())
    return false;
  for (size_t I = 0; I < B.size(); ++I)
    if (A[AFrom + I].Kind != B[I].Kind || A[AFrom + I].Text != B[I].Text)
      return false;
  return true;
}

// An integer literal written in decimal, octal or hexadecimal, without suffix letters that
// change its meaning.
std::optional<long long> literal(const std::string &S) {
  if (S.empty() || !isdigit((unsigned char)S[0]))
    return std::nullopt;
  std::string Digits = S;
  while (!Digits.empty() && (Digits.back() == 'u' || Digits.back() == 'U' || Digits.back() == 'l' ||
                             Digits.back() == 'L'))
    Digits.pop_back();
  errno = 0;
  char *End = nullptr;
  long long V = std::strtoll(Digits.c_str(), &End, 0);
  if (errno || !End || *End)
    return std::nullopt;
  return V;
}

// X - K as a user would write it: a number when X is one, else 'X-K' (parentheses around X
// where '-' would bind inside it).
std::string minus(const std::string &X, bool XAdditive, long long K) {
  if (K == 0)
    return X;
  if (std::optional<long long> V = literal(compact(X)))
    return std::to_string(*V - K);
  return (XAdditive ? X : "(" + X + ")") + "-" + std::to_string(K);
}

// The number of elements of one dimension, where the declaration or the shape says it.
struct Extent {
  std::optional<long long> Value; // a constant size
  std::string Written;            // the size as written (empty when not known)
  bool WrittenAdditive = false;
  bool known() const { return Value || !Written.empty(); }
  std::string shown() const { return !Written.empty() ? Written : std::to_string(*Value); }
};

} // namespace

namespace {
// The declarations that a dependence's base names, and the type of what it names, with the
// sizes as written where the declaration has them.
class BaseTypes {
public:
  BaseTypes(ASTContext &Ctx, ArrayRef<const VarDecl *> Scope) : Ctx(Ctx), Scope(Scope) {}

  // The type (with its written sizes) of the expression T, or a null TypeLoc.
  TypeLoc of(const Toks &T) {
    Pos = 0;
    Tokens = &T;
    TypeLoc TL = unary();
    return Pos == T.size() ? TL : TypeLoc();
  }

  // The declaration's own written type, without what only decorates it.
  static TypeLoc strip(TypeLoc TL) {
    for (int Guard = 0; Guard < 32 && !TL.isNull(); ++Guard) {
      TL = TL.getUnqualifiedLoc();
      if (auto P = TL.getAs<ParenTypeLoc>())
        TL = P.getInnerLoc();
      else if (auto E = TL.getAs<ElaboratedTypeLoc>())
        TL = E.getNamedTypeLoc();
      else if (auto A = TL.getAs<AttributedTypeLoc>())
        TL = A.getModifiedLoc();
      else if (auto M = TL.getAs<MacroQualifiedTypeLoc>())
        TL = M.getInnerLoc();
      else if (auto D = TL.getAs<DecayedTypeLoc>())
        TL = D.getOriginalLoc();
      else if (auto J = TL.getAs<AdjustedTypeLoc>())
        TL = J.getOriginalLoc();
      else if (auto R = TL.getAs<ReferenceTypeLoc>())
        TL = R.getPointeeLoc();
      else if (auto Td = TL.getAs<TypedefTypeLoc>()) {
        TypeSourceInfo *TSI = Td.getTypedefNameDecl()->getTypeSourceInfo();
        if (!TSI)
          return TypeLoc();
        TL = TSI->getTypeLoc();
      } else
        break;
    }
    return TL;
  }

  // The element type of an array or a pointer.
  static TypeLoc element(TypeLoc TL) {
    TL = strip(TL);
    if (TL.isNull())
      return TL;
    if (auto A = TL.getAs<ArrayTypeLoc>())
      return A.getElementLoc();
    if (auto P = TL.getAs<PointerTypeLoc>())
      return P.getPointeeLoc();
    return TypeLoc();
  }

private:
  ASTContext &Ctx;
  ArrayRef<const VarDecl *> Scope;
  const Toks *Tokens = nullptr;
  size_t Pos = 0;

  bool is(tok::TokenKind K) const { return Pos < Tokens->size() && (*Tokens)[Pos].Kind == K; }

  static TypeLoc declared(const DeclaratorDecl *D) {
    TypeSourceInfo *TSI = D->getTypeSourceInfo();
    if (!TSI || D->getType()->isDependentType())
      return TypeLoc();
    return TSI->getTypeLoc();
  }

  TypeLoc variable(const std::string &Name) {
    const VarDecl *V = findVariable(Ctx, Name, Scope);
    return V ? declared(V) : TypeLoc();
  }

  // A member of a structure or class (not of its bases): an array that is the last member
  // and has at most one element may be a flexible array written the old way.
  TypeLoc member(TypeLoc Record, const std::string &Name) {
    Record = strip(Record);
    if (Record.isNull())
      return TypeLoc();
    const RecordDecl *RD = Record.getType()->getAsRecordDecl();
    if (!RD || !RD->getDefinition())
      return TypeLoc();
    RD = RD->getDefinition();
    const FieldDecl *Found = nullptr, *Last = nullptr;
    for (const FieldDecl *F : RD->fields()) {
      if (F->getName() == Name)
        Found = F;
      Last = F;
    }
    if (!Found)
      return TypeLoc();
    if (Found == Last)
      if (const auto *CA = Ctx.getAsConstantArrayType(Found->getType()))
        if (CA->getSize().ule(1))
          return TypeLoc();
    return declared(Found);
  }

  // unary: '*' unary | '&' unary (not followed) | postfix
  TypeLoc unary() {
    if (is(tok::star)) {
      ++Pos;
      return element(unary());
    }
    return postfix();
  }

  TypeLoc postfix() {
    TypeLoc TL;
    if (is(tok::identifier)) {
      TL = variable((*Tokens)[Pos].Text);
      ++Pos;
    } else if (is(tok::l_paren)) {
      ++Pos;
      TL = unary();
      if (!is(tok::r_paren))
        return TypeLoc();
      ++Pos;
    } else {
      return TypeLoc();
    }
    while (!TL.isNull() && Pos < Tokens->size()) {
      if (is(tok::l_square)) {
        int Depth = 0;
        for (; Pos < Tokens->size(); ++Pos) {
          if (isOpenTok((*Tokens)[Pos].Kind))
            ++Depth;
          else if (isCloseTok((*Tokens)[Pos].Kind) && --Depth == 0)
            break;
        }
        if (Pos == Tokens->size())
          return TypeLoc();
        ++Pos;
        TL = element(TL);
      } else if ((is(tok::period) || is(tok::arrow)) && Pos + 1 < Tokens->size() &&
                 (*Tokens)[Pos + 1].Kind == tok::identifier) {
        TypeLoc Record = is(tok::arrow) ? element(TL) : TL;
        TL = member(Record, (*Tokens)[Pos + 1].Text);
        Pos += 2;
      } else {
        break;
      }
    }
    return TL;
  }
};
} // namespace

void Lowerer::checkSectionBounds(const Pragma &P, ArrayRef<const VarDecl *> Scope) {
  if (!SectionBoundsChecked.insert(&P).second)
    return;
  BaseTypes Types(Ctx, Scope);

  // The written size of an array type's dimension, and its value when it is constant.
  auto ArrayExtent = [&](TypeLoc TL) {
    Extent E;
    TL = BaseTypes::strip(TL);
    if (TL.isNull())
      return E;
    auto A = TL.getAs<ArrayTypeLoc>();
    if (!A)
      return E;
    const ArrayType *AT = Ctx.getAsArrayType(A.getType());
    if (!AT)
      return E;
    if (const auto *CA = dyn_cast<ConstantArrayType>(AT)) {
      if (CA->getSize().getActiveBits() < 63)
        E.Value = (long long)CA->getSize().getZExtValue();
    } else if (!isa<VariableArrayType>(AT)) {
      return E;
    }
    if (Expr *Size = A.getSizeExpr()) {
      // The size as the user wrote it (a macro's name, not its expansion); nothing when the
      // declaration comes from a macro.
      CharSourceRange R =
          Lexer::makeFileCharRange(CharSourceRange::getTokenRange(Size->getSourceRange()), SM, LO);
      if (R.isValid()) {
        E.Written = Lexer::getSourceText(R, SM, LO).str();
        // Sums and products keep their meaning with '-1' after them; anything else gets
        // parentheses in the hints.
        E.WrittenAdditive = E.Written.find_first_of("<>=&|^?,") == std::string::npos;
      }
    }
    if (!E.Value && E.Written.empty())
      return Extent();
    return E;
  };

  for (const Clause &Cl : P.Clauses) {
    bool Depend = Cl.Info->Arg == ArgKind::DependList;
    std::string ClauseName = std::string(Cl.Info->Spelling) + "()";
    for (const DepItem &D : Cl.Deps) {
      if (D.Sections.empty())
        continue;
      // The item as written, with dimension Dim's bounds replaced (Dim < 0: as written).
      auto Spell = [&](int Dim, const std::string &Replacement) {
        std::string S;
        if (!D.Shape.empty()) {
          S = "(";
          for (const Toks &T : D.Shape)
            S += "[" + spellTokens(T) + "]";
          S += spellTokens(D.Base) + ")";
        } else {
          S = D.BaseText;
        }
        for (size_t I = 0; I < D.Sections.size(); ++I) {
          const Section &Sec = D.Sections[I];
          if ((int)I == Dim) {
            S += "[" + Replacement + "]";
            continue;
          }
          S += "[" + (Sec.ImplicitLower ? std::string() : spellTokens(Sec.Lower)) + Sec.Sep.Text +
               spellTokens(Sec.Second) + "]";
        }
        return S;
      };
      // The name of the array in messages: 'v', a row of 'm', '[N]p'.
      std::string ArrayName;
      if (!D.Shape.empty()) {
        for (const Toks &T : D.Shape)
          ArrayName += "[" + spellTokens(T) + "]";
        ArrayName += spellTokens(D.Base);
      } else {
        ArrayName = D.BaseText;
      }
      // The extents of the section's dimensions.
      std::vector<Extent> Extents(D.Sections.size());
      if (!D.Shape.empty()) {
        for (size_t I = 0; I < D.Sections.size() && I < D.Shape.size(); ++I) {
          Extents[I].Written = spellTokens(D.Shape[I]);
          Extents[I].WrittenAdditive = additive(D.Shape[I]);
          if (I < D.ConstShape.size())
            Extents[I].Value = D.ConstShape[I];
        }
      } else if (TypeLoc TL = Types.of(D.Base); !TL.isNull()) {
        for (size_t I = 0; I < D.Sections.size() && !TL.isNull(); ++I) {
          Extents[I] = ArrayExtent(TL);
          TL = BaseTypes::element(TL);
        }
      }

      for (size_t I = 0; I < D.Sections.size(); ++I) {
        const Section &S = D.Sections[I];
        const std::string Lower = spellTokens(S.Lower), Second = spellTokens(S.Second);
        const std::string Sep = S.Sep.Text.empty() ? (S.Inclusive ? ":" : ";") : S.Sep.Text;
        // A fix-it replaces the bound after the separator (or the separator and the bound).
        auto Fix = [&](DiagId Id, const DiagArgs &Args, bool WithSep,
                       const std::string &Replacement) {
          SourceLocation B = WithSep ? S.Sep.Loc : S.Second.front().Loc;
          SourceLocation E = S.Second.back().Loc;
          if (P.Operator || B.isInvalid() || E.isInvalid() || B.isMacroID() || E.isMacroID() ||
              SM.getFileID(B) != SM.getFileID(E) || SM.getFileOffset(E) < SM.getFileOffset(B)) {
            SectionWarnings.back().push_back({S.Second.front().Loc, Id, Args, false, 0, ""});
            return;
          }
          unsigned Length = SM.getFileOffset(E) + S.Second.back().Text.size() - SM.getFileOffset(B);
          SectionWarnings.back().push_back(
              {S.Second.front().Loc, Id, Args, true, Length, Replacement});
        };
        auto Warn = [&](DiagId Id, const DiagArgs &Args) {
          SectionWarnings.push_back({{S.Second.front().Loc, Id, Args, false, 0, ""}});
        };
        std::string Where = I == 0 ? "'" + ArrayName + "'" : "a row of '" + ArrayName + "'";
        std::string Dimension =
            D.Sections.size() > 1 ? " in dimension " + std::to_string(I + 1) : "";

        // 1. Past the end of an array whose size is known.
        const Extent &E = Extents[I];
        std::optional<long long> Over; // elements past the end
        if (E.known()) {
          if (S.ConstLower && S.ConstLength && E.Value && *S.ConstLength > 0 &&
              *S.ConstLower >= 0) {
            long long End;
            if (!__builtin_add_overflow(*S.ConstLower, *S.ConstLength, &End) && End > *E.Value)
              Over = End - *E.Value;
          } else if (!E.Written.empty() && compact(S.Second) == compact(E.Written)) {
            if (S.Inclusive) // x[a:n] on x[n]: x[n] is one past the end
              Over = 1;
            else if (S.ConstLower && *S.ConstLower > 0) // x[2;n] on x[n]
              Over = *S.ConstLower;
          }
        }
        if (Over) {
          std::string Covers = S.Inclusive ? "elements " + Lower + " to " + Second
                                           : Second + " elements from index " + Lower;
          std::string Past = *Over == 1 ? "one past" : std::to_string(*Over) + " elements past";
          Warn(DiagId::SectionPastEnd,
               {Spell(-1, ""), ClauseName, Covers + Dimension, Past, Where, E.shown()});
          std::string LowerPart = S.ImplicitLower ? std::string() : Lower;
          if (S.Inclusive) {
            // The last element is the size minus one; as a length from the start, the size
            // minus the start.
            std::string Last = minus(E.shown(), E.WrittenAdditive, 1);
            std::string Length;
            if (S.ConstLower)
              Length = minus(E.shown(), E.WrittenAdditive, *S.ConstLower);
            else if (S.Lower.size() == 1)
              Length = (E.WrittenAdditive ? E.shown() : "(" + E.shown() + ")") + "-" + Lower;
            std::string Alternatives = "'" + Spell((int)I, LowerPart + ":" + Last) + "'";
            if (!Length.empty())
              Alternatives += " or '" + Spell((int)I, LowerPart + ";" + Length) + "'";
            Fix(DiagId::SectionPastEndInclusiveFix, {ClauseName, Alternatives}, false, Last);
          } else if (S.ConstLower) {
            std::string Length = minus(E.shown(), E.WrittenAdditive, *S.ConstLower);
            Fix(DiagId::SectionPastEndLengthFix,
                {Sep, ClauseName, "'" + Spell((int)I, LowerPart + Sep + Length) + "'", Where},
                false, Length);
          }
          continue;
        }

        // The part of the second bound that the start does not account for: the R of x[a:a+R],
        // or B*R of x[A*B:(A+R)*B].
        if (S.ImplicitLower || S.Lower.empty() || S.Second.size() <= S.Lower.size())
          continue;
        Toks Added;
        bool Product = false;
        if (additive(S.Lower) && sameTokens(S.Second, 0, S.Lower.size(), S.Lower) &&
            S.Second[S.Lower.size()].Kind == tok::plus) {
          Added.assign(S.Second.begin() + S.Lower.size() + 1, S.Second.end());
          // a + R - 1 and the like are sums that the rule below does not judge.
          if (!additive(Added))
            continue;
        } else {
          // x[A*B : (A+R)*B]
          size_t Star = 0;
          for (size_t J = 0, Depth = 0; J < S.Lower.size(); ++J) {
            if (isOpenTok(S.Lower[J].Kind))
              ++Depth;
            else if (isCloseTok(S.Lower[J].Kind))
              --Depth;
            else if (Depth == 0 && S.Lower[J].Kind == tok::star && !Star)
              Star = J;
          }
          if (!Star || !multiplicative(S.Lower))
            continue;
          Toks A(S.Lower.begin(), S.Lower.begin() + Star),
              B(S.Lower.begin() + Star + 1, S.Lower.end());
          // ( A + R ) * B
          const Toks &T = S.Second;
          if (T.empty() || T[0].Kind != tok::l_paren)
            continue;
          size_t Close = 0;
          for (size_t J = 0, Depth = 0; J < T.size(); ++J) {
            if (isOpenTok(T[J].Kind))
              ++Depth;
            else if (isCloseTok(T[J].Kind) && --Depth == 0) {
              Close = J;
              break;
            }
          }
          if (!Close || Close + 1 >= T.size() || T[Close + 1].Kind != tok::star ||
              !sameTokens(T, Close + 2, T.size(), B) || !sameTokens(T, 1, 1 + A.size(), A) ||
              1 + A.size() >= Close || T[1 + A.size()].Kind != tok::plus)
            continue;
          Toks R(T.begin() + 2 + A.size(), T.begin() + Close);
          if (!multiplicative(R))
            continue;
          Product = true;
          std::optional<long long> One = R.size() == 1 ? literal(R[0].Text) : std::nullopt;
          if (!(One && *One == 1)) {
            Added = R;
            Added.push_back({tok::star, "*", SourceLocation()});
          }
          Added.insert(Added.end(), B.begin(), B.end());
        }
        const std::string AddedText = spellTokens(Added);
        if (S.Inclusive) {
          // 2. x[i:i+BS] in an inclusive section: BS+1 elements. A number (x[i:i+1], two
          // elements) is left alone, and so is anything but a product (x[i:i+BS-1]).
          if (!Product && (!multiplicative(Added) ||
                           (Added.size() == 1 && Added[0].Kind == tok::numeric_constant)))
            continue;
          std::string Count = AddedText + "+1";
          Warn(DiagId::SectionEndFromStart,
               {Spell(-1, ""), ClauseName, Count, Lower, Second, Dimension});
          Fix(DiagId::SectionEndFromStartFix,
              {AddedText, "'" + Spell((int)I, Lower + ";" + AddedText) + "'",
               "'" + Spell((int)I, Lower + ":" + minus(Second, additive(S.Second), 1)) + "'", Count,
               "'" + Spell((int)I, Lower + ";" + Count) + "'"},
              true, ";" + AddedText);
        } else if (Depend) {
          // 3. depend(in: x[i:i+BS]): a length that counts from the start. x[0:0+n] is
          // harmless.
          if (S.ConstLower && *S.ConstLower == 0)
            continue;
          // x[i:i+BS-1] was meant inclusive: BS elements.
          Toks Meant = Added;
          if (!Product && Meant.size() >= 3 && Meant.back().Text == "1" &&
              Meant[Meant.size() - 2].Kind == tok::minus) {
            Toks Head(Meant.begin(), Meant.end() - 2);
            if (multiplicative(Head))
              Meant = Head;
          }
          std::string MeantText = spellTokens(Meant);
          Warn(DiagId::DependLengthFromStart, {Spell(-1, ""), Second, Lower, Dimension});
          Fix(DiagId::DependLengthFromStartFix,
              {"'" + Spell((int)I, Lower + Sep + MeantText) + "'", MeantText, Lower, Second,
               "'" + Spell((int)I, Lower + ";" + Second) + "'"},
              false, MeantText);
        }
      }
    }
  }
}

void Lowerer::reportSectionBounds() {
  std::stable_sort(SectionWarnings.begin(), SectionWarnings.end(),
                   [&](const std::vector<SectionWarning> &A, const std::vector<SectionWarning> &B) {
                     return SM.isBeforeInTranslationUnit(A.front().Loc, B.front().Loc);
                   });
  for (const std::vector<SectionWarning> &Group : SectionWarnings)
    for (const SectionWarning &W : Group)
      if (W.HasFix)
        Diags.reportFix(W.Id, W.Loc, W.Args, W.FixLength, W.FixText);
      else
        Diags.report(W.Id, W.Loc, W.Args);
  SectionWarnings.clear();
}

} // namespace lowering
} // namespace nanort
