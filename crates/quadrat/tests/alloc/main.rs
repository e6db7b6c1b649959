//! Steady states allocate nothing: a counting global allocator watches the
//! tree's queries, pairs and refills, and the world's moves and steps. And
//! trees hold little room they do not use.
//!
//! The counts are global, so everything runs in one test, one part after
//! the other: with several tests, the test harness records one test's
//! result on its own thread, allocating, while another test counts.

mod counting;
mod tree;
mod world;

#[test]
fn allocations_and_heap() {
    tree::steady_state_allocates_nothing();
    tree::bulk_builds_keep_little_spare_room();
    tree::bulk_builds_peak_near_what_they_hold();
    tree::shrink_to_fit_and_reserve_leave_no_spare_room();
    world::steady_state_steps_allocate_nothing();
    world::reserve_and_shrink_to_fit();
}

#[global_allocator]
static GLOBAL: counting::Counting = counting::Counting;
