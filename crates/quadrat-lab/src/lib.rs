//! The quadrat lab: tools around the [`quadrat`] quadtree that carry heavy
//! dependencies the library must not have.
//!
//! The `quadrat-lab` binary exposes them as subcommands:
//!
//! - [`serve`] (the default): a web page with a live simulation per browser
//!   tab — moving objects, the quadtree's nodes, colliding objects, a player
//!   steered with the keyboard, a query rectangle dragged with the mouse,
//!   and the figures that show what the tree saves. The simulation itself is
//!   [`sim`].
//! - [`render`](mod@render): a scenario's tree as an SVG and PNG picture.
//!
//! The benchmarks against brute force and other broad phases are the
//! `quadrat-bench` crate.

pub mod render;
pub mod serve;
pub mod sim;
