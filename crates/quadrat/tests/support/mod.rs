//! What the test binaries share: generators, the tree's model and harness,
//! and a random operation mix. Each test binary that needs it says
//! `mod support;`; the fuzz targets include the same files by path.

#![allow(dead_code, unreachable_pub)]

pub mod ops;
pub mod shapes;
pub mod tree;
