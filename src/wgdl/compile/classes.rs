//! Pass 1: classes, attributes (with their types and initial values), object descriptions,
//! game-value definitions, settings (`limits`, durations, sessions) and groups. Everything later
//! passes resolve by name is indexed here.

use super::*;

impl Compiler<'_> {
    pub(super) fn collect_classes(&mut self) {
        let mut parents: Vec<Option<ast::Ident>> = Vec::new();
        for d in self.decls() {
            if let DeclKind::Class { name, parent } = &d.kind {
                if let Some(&prev) = self.class_ix.get(&name.name) {
                    let first_line = line_of(&self.source, self.classes[prev as usize].span);
                    self.error(name.span, DiagKind::Duplicate { what: "class", name: name.name.clone(), first_line });
                    continue;
                }
                if self.over_limit(self.classes.len(), "classes", name.span) {
                    continue;
                }
                self.class_ix.insert(name.name.clone(), self.classes.len() as ClassId);
                self.classes.push(ClassDecl {
                    name: name.name.clone(),
                    parent: None,
                    span: name.span,
                    own_attrs: vec![],
                    own_consts: vec![],
                });
                parents.push(parent.clone());
            }
        }
        for (i, p) in parents.iter().enumerate() {
            if let Some(p) = p {
                match self.class_ix.get(&p.name) {
                    Some(&pc) => self.classes[i].parent = Some(pc),
                    None => {
                        let known = self.known(&self.class_ix);
                        self.error(
                            p.span,
                            DiagKind::UnknownName {
                                what: "parent class",
                                name: p.name.clone(),
                                expected: format!("a declared class ({known})"),
                            },
                        );
                    }
                }
            }
        }
        // Cycles: walk up from each class not yet seen until a class already placed (done),
        // the top (None) or a class on the current walk (a loop). Linear in the classes.
        let n = self.classes.len();
        let mut in_cycle = vec![false; n];
        // 0 unseen, 1 on the current walk, 2 done.
        let mut mark = vec![0u8; n];
        let mut walk: Vec<usize> = Vec::new();
        for i in 0..n {
            walk.clear();
            let mut c = Some(i);
            while let Some(x) = c {
                match mark[x] {
                    2 => break,
                    1 => {
                        let at = walk.iter().position(|&w| w == x).expect("on the walk");
                        let mut cycle = walk[at..].to_vec();
                        // Named from its first-declared class, up the chain and back to it.
                        let first = (0..cycle.len()).min_by_key(|&k| cycle[k]).expect("a loop has classes");
                        cycle.rotate_left(first);
                        for &k in &cycle {
                            in_cycle[k] = true;
                        }
                        let mut names: Vec<String> = cycle.iter().map(|&k| self.classes[k].name.clone()).collect();
                        names.push(self.classes[cycle[0]].name.clone());
                        let span = self.classes[cycle[0]].span;
                        self.error(span, DiagKind::CyclicInheritance { cycle: names.join(" : ") });
                        break;
                    }
                    _ => {
                        mark[x] = 1;
                        walk.push(x);
                        c = self.classes[x].parent.map(|p| p as usize);
                    }
                }
            }
            for &w in &walk {
                mark[w] = 2;
            }
        }
        for (i, &bad) in in_cycle.iter().enumerate() {
            if bad {
                self.classes[i].parent = None;
            }
        }
        // Parents before children, and each class's subtree as an interval of a pre-order
        // numbering (linear in the number of classes, however deep the chains). A class more
        // than MAX_INHERITANCE levels down is cut from its parent (one error) and numbered as
        // a tree of its own.
        let mut kids: Vec<Vec<ClassId>> = vec![Vec::new(); n];
        let mut roots = Vec::new();
        for (i, c) in self.classes.iter().enumerate() {
            match c.parent {
                Some(p) => kids[p as usize].push(i as ClassId),
                None => roots.push(i as ClassId),
            }
        }
        // Popped in declaration order.
        roots.reverse();
        let mut depth = vec![0usize; n];
        let mut span = vec![(0u32, 0u32); n];
        let mut next = 0u32;
        let mut reported = false;
        // (class, entered): a class is numbered on entry and closed after its subtree.
        let mut stack: Vec<(ClassId, bool)> = Vec::new();
        while let Some(root) = roots.pop() {
            stack.push((root, false));
            while let Some((c, entered)) = stack.pop() {
                let c = c as usize;
                if entered {
                    span[c].1 = next - 1;
                    continue;
                }
                span[c].0 = next;
                next += 1;
                stack.push((c as ClassId, true));
                for &k in kids[c].iter().rev() {
                    if depth[c] < MAX_INHERITANCE {
                        depth[k as usize] = depth[c] + 1;
                        stack.push((k, false));
                        continue;
                    }
                    if !reported {
                        reported = true;
                        let span = self.classes[k as usize].span;
                        self.error(
                            span,
                            DiagKind::Invalid {
                                what: format!("a chain of more than {MAX_INHERITANCE} parent classes"),
                                expected: format!("classes at most {MAX_INHERITANCE} levels below the top"),
                            },
                        );
                    }
                    self.classes[k as usize].parent = None;
                    roots.push(k);
                }
            }
        }
        let mut order: Vec<ClassId> = (0..n as ClassId).collect();
        order.sort_by_key(|&c| (depth[c as usize], c));
        self.class_order = order;
        self.is_sub = span;
    }

    /// Whether `count` declarations of a kind already fill its 16-bit index; reports the
    /// first one past the limit (once per kind), so an index can never wrap.
    pub(super) fn over_limit(&mut self, count: usize, what: &'static str, span: Span) -> bool {
        if count < MAX_DECLS {
            return false;
        }
        if !self.limits_hit.contains(&what) {
            self.limits_hit.push(what);
            self.error(
                span,
                DiagKind::Invalid {
                    what: format!("more than {MAX_DECLS} {what}"),
                    expected: format!("at most {MAX_DECLS} {what} in one game (the limit of a 16-bit index)"),
                },
            );
        }
        true
    }

    /// Whether the classes, the object descriptions and the initial objects, each counted with
    /// every attribute and constant it holds (inherited ones too), stay within [`MAX_SLOTS`];
    /// else one error at the line where the count passes it. Checked before any of them is laid
    /// out, since each class, description and object gets a list of that length.
    fn slots_fit(&mut self) -> bool {
        let mut width = vec![0u64; self.classes.len()];
        for &c in &self.class_order {
            let cd = &self.classes[c as usize];
            width[c as usize] = cd.parent.map_or(0, |p| width[p as usize]) + (cd.own_attrs.len() + cd.own_consts.len()) as u64;
        }
        let mut total: u64 = 0;
        let mut past: Option<(Span, &'static str)> = None;
        for (c, cd) in self.classes.iter().enumerate() {
            total += width[c];
            if total > MAX_SLOTS as u64 {
                past = Some((cd.span, "classes"));
                break;
            }
        }
        if past.is_none() {
            for &(_, c, span) in &self.god_decl {
                total += width[c as usize];
                if total > MAX_SLOTS as u64 {
                    past = Some((span, "object descriptions"));
                    break;
                }
            }
        }
        if past.is_none() {
            for d in self.decls() {
                if let DeclKind::Initial { object } = &d.kind
                    && let Some(&g) = self.god_ix.get(&object.name)
                {
                    total += width[self.god_decl[g as usize].1 as usize];
                    if total > MAX_SLOTS as u64 {
                        past = Some((object.span, "initial objects"));
                        break;
                    }
                }
            }
        }
        let Some((span, what)) = past else { return true };
        self.error(
            span,
            DiagKind::Invalid {
                what: format!("the {what} up to here hold more than {MAX_SLOTS} attribute values in all (with the classes' and descriptions' before them; inherited attributes count in each class)"),
                expected: format!("at most {MAX_SLOTS} attribute values across classes, object descriptions and initial objects"),
            },
        );
        false
    }

    pub(super) fn class_is_sub(&self, a: ClassId, b: ClassId) -> bool {
        crate::wgdl::program::within(&self.is_sub, a, b)
    }

    pub(super) fn resolve_class(&mut self, id: &ast::Ident, what: &'static str) -> Option<ClassId> {
        match self.class_ix.get(&id.name) {
            Some(&c) => Some(c),
            None => {
                let known = self.known(&self.class_ix);
                let hint = if self.god_ix.contains_key(&id.name) {
                    format!("a class, but `{}` is an object description", id.name)
                } else {
                    format!("a declared class ({known})")
                };
                self.error(id.span, DiagKind::UnknownName { what, name: id.name.clone(), expected: hint });
                None
            }
        }
    }

    pub(super) fn type_of(&mut self, t: &TypeExpr) -> Option<Ty> {
        Some(match t {
            TypeExpr::Long => Ty::Long,
            TypeExpr::Double => Ty::Double,
            TypeExpr::Boolean => Ty::Bool,
            TypeExpr::String => Ty::Str,
            TypeExpr::Object(c) => Ty::Obj(self.resolve_class(c, "class")?),
        })
    }

    /// Finds an attribute (instance or constant) by name in a class or its ancestors.
    /// A name is declared once along a chain of classes (duplicates were removed), so the first
    /// class up the chain that declares it has it; at most [`MAX_INHERITANCE`] map lookups.
    pub(super) fn find_attr(&self, class: ClassId, name: &str) -> Option<(bool, usize, Ty)> {
        let ci = &self.out_classes[class as usize];
        let mut c = Some(class);
        while let Some(k) = c {
            if let Some(&(is_const, i)) = self.attr_ix.get(k as usize).and_then(|ix| ix.get(name)) {
                let ty = if is_const { ci.consts[i].ty } else { ci.attrs[i].ty };
                return Some((is_const, i, ty));
            }
            c = self.classes[k as usize].parent;
        }
        None
    }

    pub(super) fn collect_attributes(&mut self) {
        // Object names are needed to tell the per-object form apart; collect them first.
        for d in self.decls() {
            if let DeclKind::Object { name, class } = &d.kind {
                if self.god_ix.contains_key(&name.name) {
                    let first = self.god_decl[self.god_ix[&name.name] as usize].2;
                    let first_line = line_of(&self.source, first);
                    self.error(name.span, DiagKind::Duplicate { what: "object description", name: name.name.clone(), first_line });
                    continue;
                }
                if self.class_ix.contains_key(&name.name) {
                    let first_line = line_of(&self.source, self.classes[self.class_ix[&name.name] as usize].span);
                    self.error(
                        name.span,
                        DiagKind::Duplicate { what: "name (a class and an object description)", name: name.name.clone(), first_line },
                    );
                    continue;
                }
                if self.over_limit(self.god_decl.len(), "object descriptions", name.span) {
                    self.broken_gods.insert(name.name.clone());
                    continue;
                }
                let Some(c) = self.resolve_class(class, "class") else {
                    self.broken_gods.insert(name.name.clone());
                    continue;
                };
                self.god_ix.insert(name.name.clone(), self.god_decl.len() as GodId);
                self.god_decl.push((name.name.clone(), c, name.span));
            }
        }
        // Each class's own attribute and constant names, where declared (kept as lines are read
        // and as inherited duplicates are removed below): lookups by name, not scans.
        let mut own_names: Vec<HashMap<String, Span>> = vec![HashMap::new(); self.classes.len()];
        for d in self.decls() {
            let DeclKind::Attribute { constant, target, name, ty, value } = &d.kind else { continue };
            if let Some(&c) = self.class_ix.get(&target.name) {
                let Some((te, tspan)) = ty else {
                    self.error(
                        name.span.to(value.span),
                        DiagKind::Unexpected {
                            found: "a value without a type".into(),
                            expected: format!(
                                "a type before the value: `attribute {} {} long 0` (`{}` is a class)",
                                target.name, name.name, target.name
                            ),
                        },
                    );
                    continue;
                };
                let Some(t) = self.type_of(te) else { continue };
                // Duplicates in this class (ancestors are checked once all lines are read, so that
                // the order of lines does not matter).
                if let Some(&first) = own_names[c as usize].get(&name.name) {
                    let first_line = line_of(&self.source, first);
                    self.error(name.span, DiagKind::Duplicate { what: "attribute", name: name.name.clone(), first_line });
                    continue;
                }
                let info = AttrInfo { name: name.name.clone(), ty: t, span: name.span.to(*tspan) };
                own_names[c as usize].insert(name.name.clone(), info.span);
                let cd = &mut self.classes[c as usize];
                if *constant { cd.own_consts.push((info, Some(value.clone()))) } else { cd.own_attrs.push((info, Some(value.clone()))) }
            } else if self.god_ix.contains_key(&target.name) {
                if *constant {
                    self.error(
                        target.span,
                        DiagKind::UnknownName {
                            what: "class",
                            name: target.name.clone(),
                            expected: "a class after `attribute class` (this is an object description)".into(),
                        },
                    );
                }
                // Per-object values are applied in collect_objects.
            } else {
                let mut all = self.known(&self.class_ix);
                all.push_str("; objects: ");
                all.push_str(&self.known(&self.god_ix));
                self.error(
                    target.span,
                    DiagKind::UnknownName {
                        what: "class or object description",
                        name: target.name.clone(),
                        expected: format!("a declared class or object ({all})"),
                    },
                );
            }
        }
        // An attribute declared again in a subclass (in any line order) is a duplicate.
        for c in 0..self.classes.len() {
            let mut anc = self.classes[c].parent;
            while let Some(a) = anc {
                let a_ix = a as usize;
                // An empty class, or one with no name in common, is skipped without a pass over the lists.
                if own_names[c].is_empty() || own_names[a_ix].is_empty() || !own_names[c].keys().any(|n| own_names[a_ix].contains_key(n)) {
                    anc = self.classes[a_ix].parent;
                    continue;
                }
                let inherited = &own_names[a_ix];
                let mut errs = Vec::new();
                let cd = &mut self.classes[c];
                for list in [&mut cd.own_attrs, &mut cd.own_consts] {
                    list.retain(|(i, _)| match inherited.get(&i.name) {
                        Some(first) => {
                            errs.push((i.span, i.name.clone(), *first));
                            false
                        }
                        None => true,
                    });
                }
                for (_, name, _) in &errs {
                    own_names[c].remove(name);
                }
                for (span, name, first) in errs {
                    let first_line = line_of(&self.source, first);
                    self.error(
                        Span { lo: span.lo, hi: span.lo + name.len() as u32 },
                        DiagKind::Duplicate { what: "attribute (inherited)", name, first_line },
                    );
                }
                anc = self.classes[a as usize].parent;
            }
        }
        if !self.slots_fit() {
            self.too_big = true;
            return;
        }
        // Layout: inherited attributes first, so offsets hold in every subclass.
        self.out_classes = self
            .classes
            .iter()
            .map(|c| ClassInfo {
                name: c.name.clone(),
                parent: c.parent,
                attrs: vec![],
                consts: vec![],
                actions: vec![],
                create_hooks: vec![],
                gods: vec![],
                actor_gate: None,
                span: c.span,
            })
            .collect();
        for &c in &self.class_order.clone() {
            let (mut attrs, mut consts) = match self.classes[c as usize].parent {
                Some(p) => (self.out_classes[p as usize].attrs.clone(), self.out_classes[p as usize].consts.clone()),
                None => (vec![], vec![]),
            };
            attrs.extend(self.classes[c as usize].own_attrs.iter().map(|(a, _)| a.clone()));
            consts.extend(self.classes[c as usize].own_consts.iter().map(|(a, _)| a.clone()));
            self.out_classes[c as usize].attrs = attrs;
            self.out_classes[c as usize].consts = consts;
        }
        // Own names by their index in the class's (and so every subclass's) lists.
        self.attr_ix = vec![HashMap::new(); self.classes.len()];
        for (c, cd) in self.classes.iter().enumerate() {
            let (na, nk) = match cd.parent {
                Some(p) => (self.out_classes[p as usize].attrs.len(), self.out_classes[p as usize].consts.len()),
                None => (0, 0),
            };
            let ix = &mut self.attr_ix[c];
            for (k, (a, _)) in cd.own_attrs.iter().enumerate() {
                ix.entry(a.name.clone()).or_insert((false, na + k));
            }
            for (k, (a, _)) in cd.own_consts.iter().enumerate() {
                ix.entry(a.name.clone()).or_insert((true, nk + k));
            }
        }
    }

    /// A literal value for an attribute of type `ty`, as the 64-bit slot value.
    pub(super) fn literal(&mut self, e: &ast::Expr, ty: Ty) -> Option<i64> {
        let (v, found) = match &e.kind {
            ExprKind::Lit(Lit::Long(v)) => (*v, Ty::Long),
            ExprKind::Lit(Lit::Double(v)) => (v.to_bits() as i64, Ty::Double),
            ExprKind::Lit(Lit::Bool(b)) => (*b as i64, Ty::Bool),
            ExprKind::Lit(Lit::Str(s)) => (self.intern(s), Ty::Str),
            ExprKind::Lit(Lit::Null) => (NULL, Ty::Null),
            ExprKind::ObjRef(name) => {
                let Some(&g) = self.god_ix.get(&name.name) else {
                    let known = self.known(&self.god_ix);
                    self.error(
                        name.span,
                        DiagKind::UnknownName {
                            what: "object description",
                            name: name.name.clone(),
                            expected: format!("a declared object ({known})"),
                        },
                    );
                    return None;
                };
                let Some(&id) = self.named.get(&g) else {
                    self.error(
                        name.span,
                        DiagKind::Invalid {
                            what: format!("`object:{}` names a description with no `initial` instance", name.name),
                            expected: format!("`initial {}` somewhere in the file", name.name),
                        },
                    );
                    return None;
                };
                (id as i64, Ty::Obj(self.god_decl[g as usize].1))
            }
            _ => {
                self.error(
                    e.span,
                    DiagKind::Unexpected {
                        found: "an expression".into(),
                        expected: "a literal value (attribute values are constants)".into(),
                    },
                );
                return None;
            }
        };
        match (ty, found) {
            (a, b) if a == b => Some(v),
            (Ty::Double, Ty::Long) => Some((v as f64).to_bits() as i64),
            (Ty::Str, Ty::Long) | (Ty::Str, Ty::Double) => {
                // `attribute o name 5` on a string attribute: the text as written.
                let text = self.source.slice(e.span).to_string();
                Some(self.intern(&text))
            }
            (Ty::Obj(_), Ty::Null) => Some(NULL),
            (Ty::Obj(want), Ty::Obj(got)) if self.class_is_sub(got, want) => Some(v),
            _ => {
                let expected = self.ty_name(ty);
                let found = self.ty_name(found);
                self.error(e.span, DiagKind::TypeMismatch { expected, found });
                None
            }
        }
    }

    pub(super) fn ty_name(&self, t: Ty) -> String {
        match t {
            Ty::Long => "long".into(),
            Ty::Double => "double".into(),
            Ty::Bool => "boolean".into(),
            Ty::Str => "string".into(),
            Ty::Null => "null".into(),
            Ty::Obj(c) => format!("object:{}", self.classes[c as usize].name),
        }
    }

    pub(super) fn collect_objects(&mut self) {
        // Initials first: named objects get their indices and slot bases from file order.
        for d in self.decls() {
            if let DeclKind::Initial { object } = &d.kind {
                match self.god_ix.get(&object.name) {
                    Some(&g) => {
                        self.named.entry(g).or_insert(self.initial.len() as u32);
                        self.initial.push(g);
                    }
                    None => {
                        let known = self.known(&self.god_ix);
                        let hint = if self.class_ix.contains_key(&object.name) {
                            format!("an object description, but `{}` is a class; declare `object <name> is {}`", object.name, object.name)
                        } else {
                            format!("a declared object description ({known})")
                        };
                        self.error(
                            object.span,
                            DiagKind::UnknownName { what: "object description", name: object.name.clone(), expected: hint },
                        );
                    }
                }
            }
        }
        // Class defaults first (so `object:x` defaults can see named objects).
        let mut defaults: Vec<(Vec<i64>, Vec<i64>)> = vec![(vec![], vec![]); self.classes.len()];
        for &c in &self.class_order.clone() {
            let (mut a, mut k) = match self.classes[c as usize].parent {
                Some(p) => defaults[p as usize].clone(),
                None => (vec![], vec![]),
            };
            let own_attrs: Vec<_> = self.classes[c as usize].own_attrs.iter().map(|(i, e)| (i.ty, e.clone())).collect();
            let own_consts: Vec<_> = self.classes[c as usize].own_consts.iter().map(|(i, e)| (i.ty, e.clone())).collect();
            for (ty, e) in own_attrs {
                a.push(e.and_then(|e| self.literal(&e, ty)).unwrap_or(0));
            }
            for (ty, e) in own_consts {
                k.push(e.and_then(|e| self.literal(&e, ty)).unwrap_or(0));
            }
            defaults[c as usize] = (a, k);
        }
        for (i, (name, class, span)) in self.god_decl.clone().into_iter().enumerate() {
            let (init, consts) = defaults[class as usize].clone();
            let name_sym = self.intern(&name);
            self.gods.push(GodInfo { name, name_sym, class, init, consts, span });
            let mut c = Some(class);
            while let Some(x) = c {
                self.out_classes[x as usize].gods.push(i as GodId);
                c = self.classes[x as usize].parent;
            }
        }
        let mut seen: HashMap<(GodId, String), Span> = HashMap::new();
        for d in self.decls() {
            let DeclKind::Attribute { constant: false, target, name, ty, value } = &d.kind else { continue };
            let Some(&g) = self.god_ix.get(&target.name) else { continue };
            if let Some(first) = seen.insert((g, name.name.clone()), name.span) {
                let first_line = line_of(&self.source, first);
                self.error(
                    name.span,
                    DiagKind::Duplicate { what: "attribute value", name: format!("{}.{}", target.name, name.name), first_line },
                );
                continue;
            }
            let class = self.gods[g as usize].class;
            let Some((is_const, idx, aty)) = self.find_attr(class, &name.name) else {
                let known: Vec<String> = self.out_classes[class as usize]
                    .attrs
                    .iter()
                    .chain(&self.out_classes[class as usize].consts)
                    .map(|a| a.name.clone())
                    .collect();
                self.error(
                    name.span,
                    DiagKind::UnknownAttribute {
                        class: self.classes[class as usize].name.clone(),
                        attr: name.name.clone(),
                        known: if known.is_empty() { "none declared".into() } else { known.join(", ") },
                    },
                );
                continue;
            };
            if let Some((te, tspan)) = ty
                && let Some(t) = self.type_of(te)
                && t != aty
            {
                let (expected, found) = (self.ty_name(aty), self.ty_name(t));
                self.error(*tspan, DiagKind::TypeMismatch { expected, found });
                continue;
            }
            if let Some(v) = self.literal(value, aty) {
                if is_const { self.gods[g as usize].consts[idx] = v } else { self.gods[g as usize].init[idx] = v }
            }
        }
        let mut base = 0u32;
        for &g in &self.initial {
            self.initial_base.push(base);
            base += self.gods[g as usize].init.len() as u32;
        }
    }

    pub(super) fn collect_game_defs(&mut self) {
        for d in self.decls() {
            if let DeclKind::GameValue { name, path } = &d.kind {
                if BUILTINS.contains(&name.name.as_str()) {
                    self.error(
                        name.span,
                        DiagKind::Invalid {
                            what: format!("`game.{}` is a built-in game value", name.name),
                            expected: format!("a name other than {}", BUILTINS.join(", ")),
                        },
                    );
                    continue;
                }
                if let Some((_, first)) = self.game_defs.get(&name.name) {
                    let first_line = line_of(&self.source, *first);
                    self.error(name.span, DiagKind::Duplicate { what: "game value", name: name.name.clone(), first_line });
                    continue;
                }
                let segs: Vec<String> = path.iter().map(|s| s.name.clone()).collect();
                if segs.last().map(|s| s.as_str()) == Some("sum") && segs.len() == 1 {
                    self.error(
                        path[0].span,
                        DiagKind::Invalid {
                            what: "`sum` alone is not a store path".into(),
                            expected: "a path such as `building.built.sum`".into(),
                        },
                    );
                }
                self.game_defs.insert(name.name.clone(), (segs, name.span));
            }
        }
    }

    pub(super) fn const_long(&mut self, e: &ast::Expr, what: &str) -> Option<i64> {
        match &e.kind {
            ExprKind::Lit(Lit::Long(v)) if *v >= 0 => Some(*v),
            ExprKind::Lit(Lit::Double(v)) if *v >= 0.0 => Some(v.floor() as i64),
            _ => {
                self.error(
                    e.span,
                    DiagKind::Unexpected {
                        found: format!("`{}`", self.source.slice(e.span)),
                        expected: format!("{what}: a number of seconds ≥ 0 such as `long 300`"),
                    },
                );
                None
            }
        }
    }

    pub(super) fn collect_misc(&mut self) {
        let mut seen: HashMap<String, Span> = HashMap::new();
        for d in self.decls() {
            match &d.kind {
                DeclKind::Session { key, expr } => {
                    if let Some(first) = seen.insert(format!("session {}", key.name), key.span) {
                        let first_line = line_of(&self.source, first);
                        self.error(key.span, DiagKind::Duplicate { what: "session setting", name: key.name.clone(), first_line });
                        continue;
                    }
                    match key.name.as_str() {
                        "length" => self.session_length = self.const_long(expr, "a session length").unwrap_or(0),
                        "pause" => self.session_pause = self.const_long(expr, "a pause between sessions").unwrap_or(0),
                        _ => self.error(
                            key.span,
                            DiagKind::UnknownName {
                                what: "session setting",
                                name: key.name.clone(),
                                expected: "`length` or `pause`".into(),
                            },
                        ),
                    }
                }
                DeclKind::Limit { key, value } => {
                    let v = (*value).min(u32::MAX as u64) as u32;
                    match key.name.as_str() {
                        "ruleFirings" => self.limits.rule_firings = v,
                        "objects" => self.limits.objects = v,
                        "timers" => self.limits.timers = v,
                        "steps" => self.limits.steps = v,
                        "turns" => self.limits.turns = v,
                        _ => self.error(
                            key.span,
                            DiagKind::UnknownName {
                                what: "limit",
                                name: key.name.clone(),
                                expected: "ruleFirings, objects, timers, steps or turns".into(),
                            },
                        ),
                    }
                }
                _ => {}
            }
        }
        if self.session_pause > 0 && self.session_length == 0 {
            let span = seen["session pause"];
            self.error(
                span,
                DiagKind::Invalid {
                    what: "a session pause without a session length".into(),
                    expected: "`session length <seconds>` as well".into(),
                },
            );
        }
    }

    pub(super) fn collect_groups(&mut self) {
        let mut ix: HashMap<String, (u16, Span)> = HashMap::new();
        for d in self.decls() {
            if let DeclKind::ActionGroup { name, weight } = &d.kind {
                if let Some((_, first)) = ix.get(&name.name) {
                    let first_line = line_of(&self.source, *first);
                    self.error(name.span, DiagKind::Duplicate { what: "action group", name: name.name.clone(), first_line });
                    continue;
                }
                if !(*weight >= 0.0) || !weight.is_finite() {
                    self.error(d.span, DiagKind::BadLiteral { ty: "probability", text: weight.to_string(), expected: "a weight ≥ 0" });
                }
                ix.insert(name.name.clone(), (self.groups.len() as u16, name.span));
                self.groups.push(Group { name: name.name.clone(), weight: *weight });
            }
        }
    }
}
