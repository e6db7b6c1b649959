//! What the test binaries share: generators, the tree's model and harness,
//! and a random operation mix. Each test binary that needs it says
//! `mod support;`; the fuzz targets include the same files by path.

#![allow(dead_code, unreachable_pub)]

pub mod ops;
pub mod shapes;
pub mod tree;

/// A batch's items, with its iterator's word for its length (`Told(i,
/// true)`) or with none (`size_hint` `(0, None)`, as a `flat_map` of
/// unknown items gives): `insert_many` builds a batch of unknown length in
/// bulk at once into an empty tree, and collects it first into another,
/// so the harness and the edge tests pass every batch both ways.
pub struct Told<I>(pub I, pub bool);

impl<I: Iterator> Iterator for Told<I> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        self.0.next()
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        if self.1 {
            self.0.size_hint()
        } else {
            (0, None)
        }
    }
}
