//! Steady states allocate nothing: a counting global allocator watches the
//! tree's queries, pairs and refills, and the world's moves and steps.

mod counting;
mod tree;
mod world;

#[global_allocator]
static GLOBAL: counting::Counting = counting::Counting;
