//===- Pragma.cpp - Parsing clause tokens against the grammar tables --------===//
#include "Pragma.h"

#include "clang/Basic/SourceManager.h"

using namespace clang;

namespace nanort {

void DiagSink::error(SourceLocation Loc, const std::string &Message) {
  SourceLocation FileLoc = SM.getFileLoc(Loc);
  std::pair<FileID, unsigned> D = SM.getDecomposedLoc(FileLoc);
  std::string File;
  if (OptionalFileEntryRef FE = SM.getFileEntryRefForID(D.first))
    File = FE->getName().str();
  Diags.push_back({File, D.second, Message});
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
  Parser(Pragma &P, DiagSink &Diags) : P(P), Diags(Diags) {}

  bool parseDepItem(const Toks &T, AccessMode Mode, std::vector<DepItem> &Out);
  bool parseDepList(const Toks &T, SourceLocation Loc, AccessMode Mode, std::vector<DepItem> &Out);
  bool parseClause(Clause &C, const Toks &Arg, bool HasParens, SourceLocation ParenLoc);

private:
  Pragma &P;
  DiagSink &Diags;
  bool fail(SourceLocation Loc, const std::string &Msg) {
    Diags.error(Loc, Msg);
    return false;
  }
};

bool Parser::parseDepItem(const Toks &T, AccessMode Mode, std::vector<DepItem> &Out) {
  DepItem D;
  D.Mode = Mode;
  D.Loc = T.front().Loc;
  size_t I = 0;
  // Shaping: [n][m]x.
  while (I < T.size() && T[I].Kind == tok::l_square) {
    size_t Close = matching(T, I);
    if (Close == T.size())
      return fail(T[I].Loc, "expected ']' to close the shape");
    Toks Dim(T.begin() + I + 1, T.begin() + Close);
    if (Dim.empty())
      return fail(T[I].Loc, "expected a size inside '[]' of a shape");
    D.Shape.push_back(Dim);
    I = Close + 1;
  }
  Toks Rest(T.begin() + I, T.end());
  if (Rest.empty())
    return fail(T.back().Loc, "expected an expression after the shape");

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
          return fail(Rest[J].Loc, "unbalanced '" + Rest[J].Text + "'");
        if (Depth == 0 && Rest[J].Kind == tok::r_square && Rest[Open].Kind == tok::l_square) {
          bool Section = false, Ternary = false;
          int D2 = 0;
          for (size_t K = Open + 1; K < J; ++K) {
            if (isOpen(Rest[K].Kind))
              ++D2;
            else if (isClose(Rest[K].Kind))
              --D2;
            else if (D2 == 0 && (Rest[K].Kind == tok::semi || Rest[K].Kind == tok::colon))
              Section = true;
            else if (D2 == 0 && Rest[K].Kind == tok::question)
              Ternary = true;
          }
          Groups.push_back({Open, J, Section && !Ternary});
        } else if (Depth == 0) {
          Groups.clear(); // a call or parenthesis: earlier groups are not trailing
        }
      } else if (Depth == 0) {
        Groups.clear();
      }
    }
    if (Depth != 0)
      return fail(Rest.back().Loc, "unbalanced brackets in dependence");
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
        return fail(Rest[Groups[G].Open].Loc,
                    "a subscript after an array section is not supported");
      Section S;
      S.Inclusive = false;
      int D2 = 0;
      bool Second = false;
      for (size_t K = Groups[G].Open + 1; K < Groups[G].Close; ++K) {
        const Tok &X = Rest[K];
        if (isOpen(X.Kind))
          ++D2;
        else if (isClose(X.Kind))
          --D2;
        if (D2 == 0 && !Second && (X.Kind == tok::semi || X.Kind == tok::colon)) {
          Second = true;
          S.Inclusive = X.Kind == tok::colon;
          continue;
        }
        (Second ? S.Second : S.Lower).push_back(X);
      }
      // x[;n] and x[:b] start at 0; x[a:] is not allowed (the size is unknown).
      if (S.Second.empty())
        return fail(Rest[Groups[G].Close].Loc,
                    S.Inclusive ? "expected an upper bound after ':' in array section"
                                : "expected a length after ';' in array section");
      if (S.Lower.empty())
        S.Lower.push_back({tok::numeric_constant, "0", Rest[Groups[G].Open].Loc});
      D.Sections.push_back(S);
    }
    if (D.Sections.size() > 2)
      return fail(Rest[Groups[First].Open].Loc,
                  "array sections of more than 2 dimensions are not supported yet");
    if (!D.Shape.empty())
      return fail(Rest[Groups[First].Open].Loc,
                  "an array section of a shaped expression is not supported yet");
  }
  D.Base.assign(Rest.begin(), Rest.begin() + BaseEnd);
  if (D.Base.empty())
    return fail(T.front().Loc, "expected an expression before the array section");
  for (size_t J = 0; J < D.Base.size(); ++J)
    if (D.Base[J].Kind == tok::semi)
      return fail(D.Base[J].Loc, "unexpected ';' in dependence (sections are written x[a;n])");
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
  Out.push_back(std::move(D));
  return true;
}

bool Parser::parseDepList(const Toks &T, SourceLocation Loc, AccessMode Mode,
                          std::vector<DepItem> &Out) {
  bool OK = true;
  for (const Toks &Item : splitCommas(T)) {
    if (Item.empty()) {
      OK = fail(Loc, "expected an expression in the list");
      continue;
    }
    OK &= parseDepItem(Item, Mode, Out);
  }
  return OK;
}

bool Parser::parseClause(Clause &C, const Toks &Arg, bool HasParens, SourceLocation ParenLoc) {
  const ClauseInfo &I = *C.Info;
  std::string Name = I.Spelling;
  if (I.Arg == ArgKind::None) {
    if (HasParens)
      return fail(ParenLoc, "clause '" + Name + "' takes no argument");
    return true;
  }
  if (!HasParens)
    return fail(C.Loc, "clause '" + Name + "' needs an argument: " + Name + "(...)");
  if (Arg.empty())
    return fail(ParenLoc, "clause '" + Name + "' has an empty argument");
  for (const Tok &K : Arg)
    if (K.Kind == tok::identifier)
      P.Identifiers.push_back(K.Text);
  switch (I.Arg) {
  case ArgKind::None:
    return true;
  case ArgKind::DepList:
    return parseDepList(Arg, ParenLoc, I.Mode, C.Deps);
  case ArgKind::DependList: {
    AccessMode Mode;
    if (Arg.size() < 2 || Arg[1].Kind != tok::colon || !findDependMode(Arg[0].Text, Mode))
      return fail(Arg[0].Loc, "expected 'in:', 'out:', 'inout:', 'inoutset:' or "
                              "'mutexinoutset:' at the start of 'depend'");
    Toks Rest(Arg.begin() + 2, Arg.end());
    if (Rest.empty())
      return fail(Arg[1].Loc, "expected a list after ':' in 'depend'");
    return parseDepList(Rest, Arg[1].Loc, Mode, C.Deps);
  }
  case ArgKind::VarList:
    for (const Toks &Item : splitCommas(Arg)) {
      if (Item.size() != 1 || Item[0].Kind != tok::identifier)
        return fail(Item.empty() ? ParenLoc : Item[0].Loc,
                    "expected a variable name in '" + Name + "'");
      C.Words.push_back(Item[0].Text);
      C.WordLocs.push_back(Item[0].Loc);
    }
    return true;
  case ArgKind::Expr:
    for (const Toks &Item : splitCommas(Arg))
      if (Item.empty())
        return fail(ParenLoc, "expected an expression in '" + Name + "'");
    C.Args.push_back(Arg);
    return true;
  case ArgKind::ExprList:
    for (const Toks &Item : splitCommas(Arg)) {
      if (Item.empty())
        return fail(ParenLoc, "expected an expression in '" + Name + "'");
      C.Args.push_back(Item);
    }
    return true;
  case ArgKind::Name:
    if (Arg.size() != 1 || (!isWord(Arg[0]) && Arg[0].Kind != tok::string_literal))
      return fail(Arg[0].Loc, "expected a name or a string literal in '" + Name + "'");
    C.Words.push_back(Arg[0].Kind == tok::string_literal
                          ? Arg[0].Text.substr(1, Arg[0].Text.size() - 2)
                          : Arg[0].Text);
    C.WordLocs.push_back(Arg[0].Loc);
    return true;
  case ArgKind::Path: {
    if (Arg.size() == 1 && Arg[0].Kind == tok::string_literal) {
      std::string Path = Arg[0].Text.substr(1, Arg[0].Text.size() - 2);
      if (Path.empty() || Arg[0].Text[0] != '"')
        return fail(Arg[0].Loc, "expected a file name in '" + Name + "'");
      C.Words.push_back(Path);
      C.WordLocs.push_back(Arg[0].Loc);
      return true;
    }
    // A bare name (kernels/saxpy.cl) comes as several tokens, written without spaces.
    std::string Path;
    for (size_t K = 0; K < Arg.size(); ++K) {
      if (Arg[K].Kind == tok::string_literal || Arg[K].Kind == tok::comma ||
          (K > 0 && Arg[K].Loc != Arg[K - 1].Loc.getLocWithOffset(Arg[K - 1].Text.size())))
        return fail(Arg[K].Loc, "expected a file name in '" + Name +
                                    "' (write a name with spaces or commas as a string "
                                    "literal)");
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
      return fail(Arg[0].Loc, "clause '" + Name + "' takes one word");
    std::string Words = I.Words;
    for (char &Ch : Words)
      if (Ch == '|')
        Ch = ',';
    for (const Toks &Item : Items) {
      if (Item.size() != 1 || !isOneOf(Item[0].Text, I.Words))
        return fail(Item.empty() ? ParenLoc : Item[0].Loc,
                    "expected one of " + Words + " in '" + Name + "'");
      C.Words.push_back(Item[0].Text);
      C.WordLocs.push_back(Item[0].Loc);
    }
    return true;
  }
  }
  return true;
}

} // namespace

void parsePragma(Pragma &P, const Toks &T, SourceLocation EodLoc, DiagSink &Diags) {
  Parser Pa(P, Diags);
  bool OK = true;
  size_t I = 0;
  const std::string Dir = "'#pragma " + P.Namespace + " " + P.DirSpelling + "'";

  if (P.Dir->OptionalName && I < T.size() && T[I].Kind == tok::l_paren) {
    if (I + 2 < T.size() && isWord(T[I + 1]) && T[I + 2].Kind == tok::r_paren) {
      P.CriticalName = T[I + 1].Text;
      I += 3;
    } else {
      Diags.error(T[I].Loc, "expected '(name)' after " + Dir);
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
      Diags.error(Name.Loc, "expected a clause name, found '" + Name.Text + "'");
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
        Diags.error(EodLoc, "expected ')' to close '" + Name.Text + "('");
        OK = false;
        break;
      }
      Arg.assign(T.begin() + I + 1, T.begin() + Close);
      I = Close + 1;
    }
    if (!C.Info) {
      Diags.error(Name.Loc, "unknown clause '" + Name.Text + "' on " + Dir);
      OK = false;
      continue;
    }
    if (!(C.Info->AllowedOn & P.Dir->Mask)) {
      if (C.Info->Kind == ClauseKind::Implements) // a version names its device first
        Diags.error(Name.Loc, "clause 'implements' goes on a '#pragma " + P.Namespace +
                                  " target' line before the task: '#pragma " + P.Namespace +
                                  " target device(...) implements(" +
                                  (Arg.size() == 1 ? Arg[0].Text : std::string("f")) + ")'");
      else
        Diags.error(Name.Loc, "clause '" + Name.Text + "' is not allowed on " + Dir);
      OK = false;
      continue;
    }
    if (C.Info->Unsupported) {
      Diags.error(Name.Loc, "clause '" + Name.Text + "' is not supported yet: " +
                                C.Info->Unsupported);
      OK = false;
      continue;
    }
    for (const Clause &Prev : P.Clauses)
      if (Prev.Info->Kind == C.Info->Kind &&
          (C.Info->Arg == ArgKind::None || C.Info->Arg == ArgKind::Expr ||
           C.Info->Arg == ArgKind::Name || C.Info->Arg == ArgKind::Keyword ||
           C.Info->Arg == ArgKind::Path ||
           C.Info->Arg == ArgKind::KeywordList || C.Info->Kind == ClauseKind::Ndrange)) {
        Diags.error(Name.Loc, "clause '" + Name.Text + "' appears twice");
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
