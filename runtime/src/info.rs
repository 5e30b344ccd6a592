//! Host facts reported by `oxrun --info`.
