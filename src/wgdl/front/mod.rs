//! The front end: text → tokens ([`lexer`]) → syntax tree with spans ([`parser`], [`ast`]), the
//! diagnostics every stage reports in ([`diag`]), and the warnings read off the tree and the
//! compiled program ([`lint`]). Nothing here evaluates a game.

pub mod ast;
pub mod diag;
pub mod lexer;
pub mod lint;
pub mod parser;
