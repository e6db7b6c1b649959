//! Conversions to and from other crates' types, one file per crate, each
//! behind the feature of the same name.

#[cfg(feature = "glam")]
mod impl_glam;
#[cfg(feature = "mint")]
mod impl_mint;
