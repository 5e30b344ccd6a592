//! oxrun's exit status for a failure's code.

/// The exit status for a failure with `code`: its low 8 bits, as the
/// kernel keeps them, except that a non-zero code whose low 8 bits are 0
/// (an `MPI_Abort` code of 256, say) gives 1, never a successful 0.
pub fn exit_status(code: i32) -> i32 {
    match code & 0xff {
        0 if code != 0 => 1,
        low => low,
    }
}

#[cfg(test)]
mod tests {
    use super::exit_status;

    #[test]
    fn non_zero_codes_never_give_a_zero_status() {
        let cases = [
            (0, 0),
            (7, 7),
            (255, 255),
            (256, 1),
            (257, 1),
            (512, 1),
            (-1, 255),
        ];
        for (code, status) in cases {
            assert_eq!(exit_status(code), status, "code {code}");
        }
    }
}
