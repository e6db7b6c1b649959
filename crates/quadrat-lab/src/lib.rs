//! The quadrat lab: tools around the [`quadrat`] quadtree that carry heavy
//! dependencies the library must not have.
//!
//! The `quadrat-lab` binary exposes each module as a subcommand:
//!
//! - [`bench`](mod@bench): brute force, other broad phases and quadrat on the same
//!   seeded scenes, checked for exactness, then timed; written out as a
//!   Markdown table, a CSV file and a log–log scaling plot.

pub mod bench;
