//! What the run time names things by, kept apart from [`super::Program`] so that the tables a
//! program holds (boards, cell tests, the compiled tier's records) can name them without naming
//! the program: the indices of classes, descriptions, actions and consequences, expression
//! ranges ([`ExprId`]), object references ([`NULL`], [`NONE`]) and an object's record
//! ([`ObjRec`]), and the static value types ([`Ty`]).

/// The object reference `null`.
pub const NULL: i64 = -1;
/// "No object" in an evaluation context.
pub const NONE: u32 = u32::MAX;

pub type ClassId = u16;
pub type GodId = u16;
pub type ActionId = u16;
pub type ConsId = u32;

/// A range of [`super::Program::code`] that evaluates to one value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExprId {
    pub start: u32,
    pub len: u32,
}

/// Static value types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    Long,
    Double,
    Bool,
    Str,
    Obj(ClassId),
    Null,
}

/// An object: its description, class, whether it is alive, and where its slots start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ObjRec {
    pub god: GodId,
    pub class: ClassId,
    pub alive: bool,
    pub base: u32,
}
