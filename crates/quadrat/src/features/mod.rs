//! Conversions to and from other crates' types, one file per crate, each
//! behind the features named after it. `impl_glam` is always compiled: each
//! of its impls carries its own version's feature.

mod impl_glam;
#[cfg(feature = "mint")]
mod impl_mint;
