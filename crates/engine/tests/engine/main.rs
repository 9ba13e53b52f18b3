#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The engine crate's integration tests: properties of the source itself that no unit test
//! can see (the modules' import arrows).

mod module_arrows;
