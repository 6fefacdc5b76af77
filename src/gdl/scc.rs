//! Strongly connected components of a dependency graph between relations ([`tarjan`]): the
//! strata of [`super::check`] (and its recursion restriction), and the cycles through negation
//! that [`super::demand`] must not close.

use crate::wgdl::diag::Span;

/// Strongly connected components, each after every component it has an edge to
/// (dependencies first). Iterative, so a long chain of relations cannot overflow the stack.
pub(super) fn tarjan(edges: &[Vec<(usize, bool, Span)>]) -> Vec<Vec<usize>> {
    let n = edges.len();
    const UNSEEN: usize = usize::MAX;
    let (mut index, mut low, mut on) = (vec![UNSEEN; n], vec![0; n], vec![false; n]);
    let (mut stack, mut out, mut next) = (Vec::new(), Vec::new(), 0);
    for root in 0..n {
        if index[root] != UNSEEN {
            continue;
        }
        // (node, next edge to look at)
        let mut call = vec![(root, 0usize)];
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on[root] = true;
        while let Some(&mut (v, ref mut e)) = call.last_mut() {
            if *e < edges[v].len() {
                let w = edges[v][*e].0;
                *e += 1;
                if index[w] == UNSEEN {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on[w] = true;
                    call.push((w, 0));
                } else if on[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                call.pop();
                if let Some(&(u, _)) = call.last() {
                    low[u] = low[u].min(low[v]);
                }
                if low[v] == index[v] {
                    let mut comp = Vec::new();
                    loop {
                        let w = stack.pop().expect("tarjan stack");
                        on[w] = false;
                        comp.push(w);
                        if w == v {
                            break;
                        }
                    }
                    out.push(comp);
                }
            }
        }
    }
    out
}
