//! The copies and comparisons the static musl build uses on x86-64 (crates/musl-x86-mem),
//! against the standard library's, for every length up to a few hundred bytes, lengths around
//! where the method changes, every alignment of 16, and overlaps in both directions.

#![cfg(target_arch = "x86_64")]

use musl_x86_mem::{compare, copy, copy_overlapping, rep_movsb_suits, REP_MOVSB_FROM};
use proptest::prelude::*;
use std::cmp::Ordering;

/// Lengths: all up to 300, then around the switch to `rep movsb` and a few large ones.
fn lengths() -> impl Iterator<Item = usize> {
    (0..=300).chain([
        REP_MOVSB_FROM - 17,
        REP_MOVSB_FROM - 1,
        REP_MOVSB_FROM,
        REP_MOVSB_FROM + 1,
        4099,
        70_001,
    ])
}

/// Bytes that differ from each position's neighbours, so a byte in the wrong place shows.
fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + i / 251) as u8).collect()
}

#[test]
fn copies_equal_the_standard_librarys() {
    for n in lengths() {
        let source = pattern(n + 16);
        for from in 0..16 {
            for to in [0, 1, 7, 8, 15] {
                let mut ours = vec![0xAA; n + 16];
                let mut std = ours.clone();
                unsafe { copy(ours.as_mut_ptr().add(to), source.as_ptr().add(from), n) };
                std[to..to + n].copy_from_slice(&source[from..from + n]);
                assert!(ours == std, "length {n}, from offset {from} to offset {to}");
            }
        }
    }
}

#[test]
fn overlapping_copies_equal_the_standard_librarys() {
    for n in lengths() {
        // Distances between source and destination: every one up to 40, then some large.
        for distance in (0..=40).chain([63, 64, 100, n / 2, n.saturating_sub(1), n, n + 1]) {
            for (from, to) in [(0, distance), (distance, 0)] {
                let mut ours = pattern(n + distance + 3);
                let mut std = ours.clone();
                unsafe {
                    let base = ours.as_mut_ptr();
                    copy_overlapping(base.add(to + 1), base.add(from + 1), n);
                }
                std.copy_within(from + 1..from + 1 + n, to + 1);
                assert!(ours == std, "length {n}, from {from} to {to}");
            }
        }
    }
}

fn sign(order: Ordering) -> i32 {
    order as i32
}

#[test]
fn comparisons_order_as_the_standard_librarys() {
    for n in lengths().take(80) {
        let a = pattern(n);
        assert_eq!(unsafe { compare(a.as_ptr(), a.as_ptr(), n) }, 0);
        for at in 0..n {
            for (x, y) in [(0x00u8, 0xFFu8), (0x7F, 0x80), (0x41, 0x42), (0xFF, 0x00)] {
                let (mut a, mut b) = (pattern(n), pattern(n));
                a[at] = x;
                b[at] = y;
                // A later difference the other way must not decide.
                if at + 1 < n {
                    a[n - 1] = 0xFF;
                    b[n - 1] = 0x00;
                }
                let ours = unsafe { compare(a.as_ptr(), b.as_ptr(), n) }.signum();
                assert_eq!(
                    ours,
                    sign(a.cmp(&b)),
                    "length {n}, first difference at {at}"
                );
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        failure_persistence: crate::support::seeds_beside_the_file(),
        .. ProptestConfig::default()
    })]

    #[test]
    fn random_bytes_copy_move_and_compare_as_the_standard_library(
        bytes in proptest::collection::vec(any::<u8>(), 0..2_500),
        other in proptest::collection::vec(any::<u8>(), 0..2_500),
        from in 0usize..2_500,
        to in 0usize..2_500,
        len in 0usize..2_500,
    ) {
        let n = bytes.len();
        let (from, to) = (from.min(n), to.min(n));
        let len = len.min(n - from).min(n - to);
        let mut ours = bytes.clone();
        let mut std = bytes.clone();
        unsafe {
            let base = ours.as_mut_ptr();
            copy_overlapping(base.add(to), base.add(from), len);
        }
        std.copy_within(from..from + len, to);
        prop_assert_eq!(&ours, &std);

        let common = n.min(other.len());
        let ours = unsafe { compare(bytes.as_ptr(), other.as_ptr(), common) }.signum();
        prop_assert_eq!(ours, sign(bytes[..common].cmp(&other[..common])));
    }
}

#[test]
fn rep_movsb_is_left_out_where_it_crawls() {
    let n = REP_MOVSB_FROM;
    assert!(!rep_movsb_suits(0x1000, 0x1000, n - 1), "short copies loop");
    for src in [0x10000, 0x10007, 0x12030] {
        for distance in (0..256)
            .chain(4096..4096 + 256)
            .chain(5 * 4096..5 * 4096 + 64)
        {
            let crawls = (1..16).contains(&(distance % 4096));
            assert_eq!(
                rep_movsb_suits(src + distance, src, n),
                !crawls,
                "dest {distance} bytes past src"
            );
        }
        // `dest` before `src`: the distance wraps, to 4096 - 5 past a multiple of 4096.
        assert!(rep_movsb_suits(src - 5, src, n));
        assert!(
            !rep_movsb_suits(src - 4096 + 5, src, n),
            "5 past a multiple of 4096"
        );
    }
}

#[test]
fn copies_on_both_sides_of_the_rep_movsb_rule_equal_the_standard_librarys() {
    // Source and destination in one buffer, two pages and 0 to 33 bytes apart (not
    // overlapping): both ways of copying, whatever the allocator's addresses.
    for n in [REP_MOVSB_FROM, REP_MOVSB_FROM + 3, 5000] {
        for distance in 8192..8192 + 34 {
            let mut ours = pattern(n + distance + 64);
            let mut std = ours.clone();
            unsafe { copy(ours.as_mut_ptr().add(distance), ours.as_ptr(), n) };
            std.copy_within(0..n, distance);
            assert!(
                ours == std,
                "length {n}, destination {distance} bytes past the source"
            );
        }
    }
}
