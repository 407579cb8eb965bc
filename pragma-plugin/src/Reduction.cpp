//===- Reduction.cpp - Task reductions and taskgroups ---------------------===//
//
// reduction(op: items) and weakreduction (OmpSs-2), in_reduction (OpenMP) on tasks, and
// '#pragma omp taskgroup [task_reduction(op: items)]' around a statement, lowered to the C
// ABI's reductions (docs/reductions.md): each item's bytes and an operator, whose element type
// is the item's. The bodies of reduction and in_reduction tasks work on their private copies
// (the argument block's pointers are turned to the copy when the body starts: InlineTasks.cpp,
// FunctionTasks.cpp); a weakreduction task only orders its children's reductions, which join
// its own, so its body keeps the original.
//
//===----------------------------------------------------------------------===//
#include "LowererImpl.h"

using namespace clang;

namespace nanort {
namespace lowering {

namespace {

const char *builtinOperator(StringRef Op) {
  static const struct {
    const char *Spelling, *Name;
  } Ops[] = {{"+", "NANORT_REDUCE_SUM"},      {"-", "NANORT_REDUCE_SUM"},
             {"*", "NANORT_REDUCE_PRODUCT"},  {"&", "NANORT_REDUCE_BIT_AND"},
             {"|", "NANORT_REDUCE_BIT_OR"},   {"^", "NANORT_REDUCE_BIT_XOR"},
             {"&&", "NANORT_REDUCE_AND"},     {"||", "NANORT_REDUCE_OR"},
             {"min", "NANORT_REDUCE_MIN"},    {"max", "NANORT_REDUCE_MAX"}};
  for (const auto &O : Ops)
    if (Op == O.Spelling)
      return O.Name;
  return nullptr;
}

// The C ABI's name of an element type of the built-in operators; null for other types.
const char *typeName(QualType T, bool &Complex, bool &Floating) {
  Complex = Floating = false;
  T = T.getCanonicalType().getUnqualifiedType();
  if (const auto *ET = T->getAs<EnumType>())
    T = ET->getDecl()->getIntegerType().getCanonicalType();
  if (const auto *CT = T->getAs<ComplexType>()) {
    Complex = true;
    const auto *E = CT->getElementType()->getAs<BuiltinType>();
    if (!E)
      return nullptr;
    switch (E->getKind()) {
    case BuiltinType::Float: return "NANORT_TYPE_FLOAT_COMPLEX";
    case BuiltinType::Double: return "NANORT_TYPE_DOUBLE_COMPLEX";
    case BuiltinType::LongDouble: return "NANORT_TYPE_LONG_DOUBLE_COMPLEX";
    default: return nullptr;
    }
  }
  const auto *BT = T->getAs<BuiltinType>();
  if (!BT)
    return nullptr;
  switch (BT->getKind()) {
  case BuiltinType::Char_S:
  case BuiltinType::Char_U: return "NANORT_TYPE_CHAR";
  case BuiltinType::SChar: return "NANORT_TYPE_SIGNED_CHAR";
  case BuiltinType::UChar: return "NANORT_TYPE_UNSIGNED_CHAR";
  case BuiltinType::Short: return "NANORT_TYPE_SHORT";
  case BuiltinType::UShort: return "NANORT_TYPE_UNSIGNED_SHORT";
  case BuiltinType::Int: return "NANORT_TYPE_INT";
  case BuiltinType::UInt: return "NANORT_TYPE_UNSIGNED_INT";
  case BuiltinType::Long: return "NANORT_TYPE_LONG";
  case BuiltinType::ULong: return "NANORT_TYPE_UNSIGNED_LONG";
  case BuiltinType::LongLong: return "NANORT_TYPE_LONG_LONG";
  case BuiltinType::ULongLong: return "NANORT_TYPE_UNSIGNED_LONG_LONG";
  case BuiltinType::Bool: return "NANORT_TYPE_BOOL";
  case BuiltinType::Float: Floating = true; return "NANORT_TYPE_FLOAT";
  case BuiltinType::Double: Floating = true; return "NANORT_TYPE_DOUBLE";
  case BuiltinType::LongDouble: Floating = true; return "NANORT_TYPE_LONG_DOUBLE";
  default: return nullptr;
  }
}

} // namespace

std::string Lowerer::itemText(const Clause &Cl, const DepItem &D) {
  std::string Prefix = std::string(Cl.Info->Spelling) + "(" + Cl.ReductionOp + ": ";
  if (D.Written.size() > Prefix.size() + 1 && D.Written.compare(0, Prefix.size(), Prefix) == 0)
    return D.Written.substr(Prefix.size(), D.Written.size() - Prefix.size() - 1);
  return D.Written;
}

const VarDecl *findVariable(ASTContext &Ctx, const std::string &Name,
                            ArrayRef<const VarDecl *> Scope) {
  const VarDecl *V = nullptr;
  for (const VarDecl *S : Scope)
    if (S->getName() == Name)
      V = S;
  if (!V)
    for (NamedDecl *N : Ctx.getTranslationUnitDecl()->lookup(&Ctx.Idents.get(Name)))
      if (auto *G = dyn_cast<VarDecl>(N))
        V = G;
  return V;
}

// The element type of a reduction item, from its variable's type: x, *p, (*p), then one
// element for a shape ([n]p reads p as a pointer) and for a section, then the elements of
// whole arrays.
bool Lowerer::reductionElement(const DepItem &D, ArrayRef<const VarDecl *> Scope,
                               QualType &Elem) const {
  size_t I = 0, Derefs = 0, Parens = 0;
  while (I < D.Base.size() && (D.Base[I].Kind == tok::star || D.Base[I].Kind == tok::l_paren)) {
    (D.Base[I].Kind == tok::star ? Derefs : Parens) += 1;
    ++I;
  }
  if (I >= D.Base.size() || D.Base[I].Kind != tok::identifier)
    return false;
  ++I;
  for (; I < D.Base.size(); ++I, --Parens)
    if (D.Base[I].Kind != tok::r_paren || Parens == 0)
      return false;
  if (Parens)
    return false;
  const VarDecl *V = D.BaseVar.empty() ? nullptr : findVar(D.BaseVar, Scope);
  if (V && V->hasGlobalStorage() && !V->isStaticLocal())
    V = nullptr; // a local of the function that the task does not capture comes first
  // Not captured (the body does not use it): the nearest local declared before the item.
  bool Captured = V != nullptr;
  for (const VarDecl *L : Vars) {
    const auto *F = dyn_cast_or_null<FunctionDecl>(L->getParentFunctionOrMethod());
    if (Captured || L->getName() != D.BaseVar || !F || !F->getBody() ||
        !SM.isBeforeInTranslationUnit(SM.getExpansionLoc(F->getBody()->getBeginLoc()), D.Loc) ||
        !SM.isBeforeInTranslationUnit(D.Loc, SM.getExpansionLoc(F->getBody()->getEndLoc())) ||
        !SM.isBeforeInTranslationUnit(SM.getExpansionLoc(L->getLocation()), D.Loc))
      continue;
    if (!V || SM.isBeforeInTranslationUnit(SM.getExpansionLoc(V->getLocation()),
                                           SM.getExpansionLoc(L->getLocation())))
      V = L;
  }
  if (!V && !D.BaseVar.empty())
    V = findVar(D.BaseVar, {});
  if (!V)
    return false;
  QualType T = V->getType().getNonReferenceType();
  if (T->isDependentType()) {
    Elem = T;
    return true;
  }
  size_t Steps = Derefs + (D.Shape.empty() ? 0 : 1) + D.Sections.size();
  for (size_t S = 0; S < Steps; ++S) {
    if (const auto *PT = T->getAs<PointerType>())
      T = PT->getPointeeType();
    else if (const ArrayType *AT = Ctx.getAsArrayType(T))
      T = AT->getElementType();
    else
      return false;
  }
  Elem = Ctx.getBaseElementType(T);
  return true;
}

// The initializer of the item's nanort_reduction_op; reports what cannot be reduced.
std::string Lowerer::reductionOpInit(const Clause &Cl, const DepItem &D,
                                     ArrayRef<const VarDecl *> Scope) {
  UsesReductions = true;
  std::string Item = itemText(Cl, D);
  if (D.Sections.size() > 1) {
    report(DiagId::ReductionItemForm, D.Loc, {Item});
    return "";
  }
  QualType Elem;
  bool Known = reductionElement(D, Scope, Elem);
  if (!Known && !CPP) {
    report(DiagId::ReductionItemUnknown, D.Loc, {Item});
    return "";
  }
  bool Dependent = Known && Elem->isDependentType();
  const char *Op = builtinOperator(Cl.ReductionOp);
  std::string Name = "\"" + Code::escape(Cl.ReductionOp) + "\"";
  if (!Op) {
    // A declared reduction for the item's type: the same type, or the same spelling.
    auto It = DeclaredReductions.find(Cl.ReductionOp);
    if (It != DeclaredReductions.end() && Known && !Dependent)
      for (const DeclaredReduction &R : It->second) {
        QualType T = resolveType(*R.Type);
        bool Same = !T.isNull() ? Ctx.hasSameUnqualifiedType(T, Elem)
                                : spellTokens(*R.Type) == Elem.getAsString(Policy) ||
                                      spellTokens(*R.Type) ==
                                          Elem.getCanonicalType().getAsString(Policy);
        if (Same)
          return "{NANORT_ABI_VERSION, NANORT_REDUCE_USER, 0, sizeof(" + R.Typedef + "), " +
                 R.Init + ", " + R.Combine + ", " + R.Destroy + ", " + Name + "}";
      }
    report(DiagId::ReductionUnknownOperator, Cl.ReductionOpLoc,
           {Cl.ReductionOp, Known ? Elem.getAsString(Policy) : std::string("?"), Item});
    return "";
  }
  std::string Type;
  if (Known && !Dependent) {
    bool Complex, Floating;
    const char *T = typeName(Elem, Complex, Floating);
    StringRef O = Cl.ReductionOp;
    bool Bitwise = O == "&" || O == "|" || O == "^";
    bool Allowed = T && !(Complex && O != "+" && O != "-" && O != "*") && !(Floating && Bitwise);
    if (!Allowed) {
      report(DiagId::ReductionOperatorType, Cl.ReductionOpLoc,
             {Cl.ReductionOp, Elem.getAsString(Policy), Item});
      return "";
    }
    Type = T;
  } else {
    // C++, a type that depends on template parameters: found when instantiated.
    Type = "nanort_reduction_type_of<std::remove_cv_t<std::remove_all_extents_t<std::"
           "remove_reference_t<decltype(*nanort_p)>>>>()";
  }
  return std::string("{NANORT_ABI_VERSION, ") + Op + ", " + Type + ", 0, 0, 0, 0, " + Name + "}";
}

// The type of a declare reduction, where it is one name of file scope (a typedef, a C++
// class) or 'struct x' / 'union x' / 'enum x'; null otherwise (then compared as spelled).
QualType Lowerer::resolveType(const Toks &T) const {
  const Tok *Name = nullptr;
  if (T.size() == 1 && T[0].Kind == tok::identifier)
    Name = &T[0];
  else if (T.size() == 2 && T[1].Kind == tok::identifier &&
           (T[0].Kind == tok::kw_struct || T[0].Kind == tok::kw_union ||
            T[0].Kind == tok::kw_enum || T[0].Kind == tok::kw_class))
    Name = &T[1];
  if (!Name)
    return QualType();
  for (NamedDecl *N : Ctx.getTranslationUnitDecl()->lookup(&Ctx.Idents.get(Name->Text))) {
    if (auto *TD = dyn_cast<TypedefNameDecl>(N))
      if (T.size() == 1)
        return TD->getUnderlyingType();
    if (auto *RD = dyn_cast<TagDecl>(N))
      return Ctx.getTypeDeclType(RD);
  }
  return QualType();
}

// '#pragma omp declare reduction(name : types : combiner) initializer(...)': for each type, a
// typedef and the operator's functions at the pragma's place, the combiner and initializer
// as written (at their own lines and columns) with omp_out, omp_in, omp_priv and omp_orig
// defined as the elements they work on.
void Lowerer::lowerDeclareReduction(const Pragma &P) {
  UsesReductions = true;
  Code C(SM);
  for (const Toks &Type : P.DeclTypes) {
    std::string Id = std::to_string(++Counter);
    DeclaredReduction R{&Type, "nanort_udr_t_" + Id, "0", "nanort_udr_combine_" + Id, "0"};
    const std::string &T = R.Typedef;
    const char *Unused = "static __attribute__((unused)) void ";
    C << "\ntypedef ";
    C.user(Type);
    C << T << ";\n";
    C << Unused << R.Combine << "(void *nanort_ov, const void *nanort_iv) {\n  " << T
      << " *nanort_out = (" << T << " *)nanort_ov;\n  " << T << " *nanort_in = (" << T
      << " *)(void *)nanort_iv;\n  (void)nanort_out; (void)nanort_in;\n"
      << "#define omp_out (*nanort_out)\n#define omp_in (*nanort_in)\n";
    C.user(P.Combiner);
    C << ";\n#undef omp_out\n#undef omp_in\n}\n";
    const Toks &I = P.Initializer;
    if (!I.empty() || CPP) {
      R.Init = "nanort_udr_init_" + Id;
      C << Unused << R.Init << "(void *nanort_pv, const void *nanort_ov) {\n  " << T
        << " *nanort_priv = (" << T << " *)nanort_pv;\n  " << T << " *nanort_orig = (" << T
        << " *)(void *)nanort_ov;\n  (void)nanort_priv; (void)nanort_orig;\n"
        << "#define omp_priv (*nanort_priv)\n#define omp_orig (*nanort_orig)\n";
      bool Assign = I.size() > 2 && I[0].Text == "omp_priv" && I[1].Kind == tok::equal;
      bool Direct = CPP && I.size() > 2 && I[0].Text == "omp_priv" && I[1].Kind == tok::l_paren;
      if (Assign) {
        Toks E(I.begin() + 2, I.end());
        // C: the expression initializes a local (braces allowed), copied in; C++: constructs.
        C << "{ " << T << " nanort_v = ";
        C.user(E);
        C << ";\n" << (CPP ? "::new (nanort_pv) " + T + "(static_cast<" + T + " &&>(nanort_v));"
                           : std::string("__builtin_memcpy(nanort_pv, &nanort_v, sizeof nanort_v);"))
          << " }\n";
      } else if (Direct) {
        C << "::new (nanort_pv) " << T;
        C.user(Toks(I.begin() + 1, I.end()));
        C << ";\n";
      } else {
        C << (CPP ? "::new (nanort_pv) " + T + "();\n"
                  : "__builtin_memset(nanort_pv, 0, sizeof(" + T + "));\n");
        if (!I.empty()) {
          C.user(I);
          C << ";\n";
        }
      }
      C << "#undef omp_priv\n#undef omp_orig\n}\n";
    }
    if (CPP) {
      R.Destroy = "nanort_udr_destroy_" + Id;
      C << Unused << R.Destroy << "(void *nanort_pv) { static_cast<" << T << " *>(nanort_pv)->~"
        << T << "(); }\n";
    }
    DeclaredReductions[P.DeclName].push_back(R);
  }
  C.at(P.End);
  RW.InsertTextAfter(P.End, C.str());
}

// '#pragma omp taskgroup [task_reduction(op: items)]' before a statement: the statement runs
// between nanort_taskgroup_begin and nanort_taskgroup_end, which waits for the tasks created
// in it and combines the taskgroup's reductions.
void Lowerer::lowerTaskgroup(const Pragma &P, const Candidate &Cand) {
  if (isa<DeclStmt>(Cand.S))
    return report(DiagId::TaskgroupOnDeclaration, P.DirLoc);
  JumpFinder JF;
  JF.TraverseStmt(Cand.S);
  if (JF.Found)
    return report(DiagId::JumpOutOfTaskgroup, JF.Found->getBeginLoc(),
                  {isa<ReturnStmt>(JF.Found) ? "'return'" : "'goto'"});
  SourceLocation Begin, End;
  statementRange(Cand, Begin, End);
  // The variables that the items may name: those of the enclosing function.
  std::vector<const VarDecl *> Scope;
  for (const VarDecl *V : Vars) {
    const auto *F = dyn_cast_or_null<FunctionDecl>(V->getParentFunctionOrMethod());
    if (F && F == Cand.Enclosing &&
        SM.isBeforeInTranslationUnit(SM.getExpansionLoc(V->getLocation()), P.Begin))
      Scope.push_back(V);
  }
  checkSectionBounds(P, Scope);
  Code C(SM);
  if (!CPP)
    if (const InlinePlan *Outer = enclosingPlan(P.Begin, nullptr))
      C.Subst = &Outer->Views;
  C << "{ nanort_check(nanort_taskgroup_begin(), \"taskgroup\");\n";
  for (const Clause &Cl : P.Clauses)
    if (Cl.Info->Kind == ClauseKind::TaskReduction)
      for (const DepItem &D : Cl.Deps)
        emitReduction(C, Cl, D, Scope,
                      "nanort: " + std::string(fileName(P.Begin)) + ":" +
                          std::to_string(lineOf(P.Begin)) + ": taskgroup ",
                      "0", "nanort_taskgroup_reduction(", nullptr);
  C.at(Begin);
  RW.InsertTextBefore(Begin, C.str());
  RW.InsertTextAfter(End, " nanort_check(nanort_taskgroup_end(), \"taskgroup\"); }");
}

} // namespace lowering
} // namespace nanort
