//! Helpers shared by the integration tests; each concern in its own module.

pub mod server;
