//! A program's names and text for states and moves: an object's label (`plot#2`), a move's
//! name (its `notation`, else `getCoins(coin20)`), a value shown by its static type, every named
//! value of a state, and a state as text. What `run` prints, the view draws and golden files
//! hold.

use super::*;

impl Program {
    /// An object's readable name: its description, numbered (`plot#2`) when there are several.
    pub fn object_label(&self, st: &State, id: u32) -> String {
        let Some(o) = st.objects.get(id as usize) else { return "?".into() };
        let g = &self.gods[o.god as usize];
        if st.objects.iter().filter(|x| x.god == o.god).count() > 1 {
            let nth = st.objects[..id as usize].iter().filter(|x| x.god == o.god).count() + 1;
            format!("{}#{nth}", g.name)
        } else {
            g.name.clone()
        }
    }

    /// `getCoins(coin20)`, `plantSeed(farm#3, wheat)`: a readable name for a move; as its
    /// action's `notation` writes it where it has one (`a7b6`, `pass`).
    pub fn action_name(&self, st: &State, a: Action) -> String {
        if let Some(s) = self.notation(st, a) {
            return s;
        }
        let info = &self.actions[a.def as usize];
        let obj = |id: u32| self.object_label(st, id);
        match info.bind {
            BindKind::None => format!("{}({})", info.name, obj(a.this)),
            BindKind::Instance(_) => format!("{}({}, {})", info.name, obj(a.this), obj(a.bound)),
            BindKind::God(_) => {
                let g = self.gods.get(a.bound as usize).map_or("?", |g| g.name.as_str());
                format!("{}({}, {g})", info.name, obj(a.this))
            }
            BindKind::Number(..) | BindKind::Step(_) => format!("{}({}, {})", info.name, obj(a.this), a.bound),
            BindKind::Hex => match &self.hex {
                Some(h) if (a.bound as usize) < h.len() => {
                    format!("{}({}, {}:({},{}))", info.name, obj(a.this), a.bound, h.q[a.bound as usize], h.r[a.bound as usize])
                }
                _ => format!("{}({}, {})", info.name, obj(a.this), a.bound),
            },
        }
    }

    /// Renders a value of static type `ty`.
    /// The raw value and type of attribute `a` of object `id` (see [`AttrRef`]).
    pub fn attr_value(&self, st: &State, id: u32, a: AttrRef) -> Option<(i64, Ty)> {
        let o = st.objects.get(id as usize)?;
        match a {
            AttrRef::Inst(k, ty) => st.slots.get(o.base as usize + k as usize).map(|&v| (v, ty)),
            AttrRef::Const(k, ty) => self.gods.get(o.god as usize)?.consts.get(k as usize).map(|&v| (v, ty)),
        }
    }

    /// A long or double value as a number (other types: `None`).
    pub fn number(ty: Ty, v: i64) -> Option<f64> {
        match ty {
            Ty::Long => Some(v as f64),
            Ty::Double => Some(f64::from_bits(v as u64)),
            _ => None,
        }
    }

    pub fn show(&self, ty: Ty, v: i64) -> String {
        match ty {
            Ty::Long => v.to_string(),
            Ty::Double => format!("{}", f64::from_bits(v as u64)),
            Ty::Bool => (v != 0).to_string(),
            Ty::Str => self.sym(v).to_string(),
            Ty::Obj(_) | Ty::Null => {
                if v == NULL {
                    "null".into()
                } else {
                    format!("object#{v}")
                }
            }
        }
    }

    /// A state as text: every named value, one `name = value` per line, then each grid's rows
    /// (`<grid>[y] = v v v`, y = 0 first). Two states with the same text are the same position.
    pub fn state_text(&self, st: &State) -> String {
        let mut lines: Vec<String> = self.named_values(st).iter().map(|(n, ty, v)| format!("{n} = {}", self.show(*ty, *v))).collect();
        for g in &self.grids {
            for y in 0..g.height {
                let row: Vec<String> =
                    (0..g.width).map(|x| st.slots.get((g.base + y * g.width + x) as usize).map_or("?".into(), |v| v.to_string())).collect();
                lines.push(format!("{}[{y}] = {}", g.name, row.join(" ")));
            }
        }
        lines.join("\n")
    }

    /// Every named value of a state, in a fixed order (the clock, the game's values, then each
    /// object's attributes): (name, type, value). `run` prints their differences; a state's text
    /// form lists them.
    pub fn named_values(&self, st: &State) -> Vec<(String, Ty, i64)> {
        let mut v = Vec::new();
        v.push(("game.time".to_string(), Ty::Long, st.clock));
        v.push(("game.sessionsFinished".to_string(), Ty::Long, st.sessions));
        for (i, path) in self.store.paths.iter().enumerate().skip(1) {
            v.push((format!("game.{path}"), Ty::Long, st.slots[i]));
        }
        for (id, o) in st.objects.iter().enumerate() {
            let name = self.object_label(st, id as u32);
            for (k, a) in self.classes[o.class as usize].attrs.iter().enumerate() {
                let val = if o.alive { st.slots[(o.base as usize) + k] } else { 0 };
                v.push((format!("{name}.{}", a.name), a.ty, val));
            }
        }
        v
    }
}
