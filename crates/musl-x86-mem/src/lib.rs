//! `memcpy`, `memmove`, `memcmp` and `bcmp` for a static musl binary on x86-64.
//!
//! Rust calls these for every move of a value larger than a few words, every `Vec` that grows
//! and every comparison of strings. musl's x86-64 `memcpy` is `rep movsq` after aligning, which
//! starts up in tens of cycles however few bytes it copies; its `memmove` copies an overlap
//! backwards with `std; rep movsb`, a byte at a time; its `memcmp` is a loop over bytes. Here:
//! up to 32 bytes, two loads and two stores that may overlap each other; longer, 16-byte SSE2
//! moves (every x86-64 has SSE2), and `rep movsb` from [`REP_MOVSB_FROM`] bytes on, where
//! its start-up is paid back; comparisons eight bytes at a time ([`compare`]).
//!
//! The functions are exported under the C names only in a musl build for x86-64, where they
//! take the place of musl's (the linker takes the first definition it meets, and the crates come
//! before the C library). Elsewhere they are plain functions, which the tests compare with the
//! standard library's.
//!
//! `#![no_builtins]`: LLVM must not turn these loops back into calls to `memcpy` or `bcmp`,
//! which would be calls to themselves; it also keeps the crate out of link-time optimisation,
//! as the compiler's own builtins are.

#![no_std]
#![no_builtins]
#![cfg(target_arch = "x86_64")]

use core::arch::asm;
use core::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_storeu_si128};
use core::ptr::{read_unaligned, write_unaligned};

/// From this many bytes a forward copy is one `rep movsb`, which moves up to a cache line a
/// cycle once started, where the loop moves 16 bytes; below, its start-up of some tens of
/// cycles is a large part of the copy. (Chosen, not measured against other thresholds.)
pub const REP_MOVSB_FROM: usize = 1024;

/// Whether a forward copy of `n` bytes from address `src` to `dest` is one `rep movsb`: from
/// [`REP_MOVSB_FROM`] bytes, unless `dest` lies 1 to 15 bytes past a multiple of 4096 from
/// `src`. There, on AMD's Zen cores, each load of the instruction waits on a store to the same
/// page offset, and it moves about a byte a cycle: 0.28 ns a byte against 0.01 at other
/// distances, and 0.035 for the 16-byte loop (docs/benchmarks-log.md, "A copy's offset"). The offset
/// is common: a gRPC message is written 5 bytes into its buffer, after its header, and the
/// allocator starts large blocks at the same offset in a page.
#[inline(always)]
pub fn rep_movsb_suits(dest: usize, src: usize, n: usize) -> bool {
    n >= REP_MOVSB_FROM && !(1..16).contains(&(dest.wrapping_sub(src) % 4096))
}

/// Copies `n` bytes from `src` to `dest`, which do not overlap (`memcpy`).
///
/// # Safety
/// `src` must be valid for reading and `dest` for writing `n` bytes, and they must not overlap.
#[inline]
pub unsafe fn copy(dest: *mut u8, src: *const u8, n: usize) {
    if n <= 32 {
        copy_short(dest, src, n);
    } else {
        copy_forward(dest, src, n);
    }
}

/// Copies `n` bytes from `src` to `dest`, which may overlap (`memmove`).
///
/// # Safety
/// `src` must be valid for reading and `dest` for writing `n` bytes.
#[inline]
pub unsafe fn copy_overlapping(dest: *mut u8, src: *const u8, n: usize) {
    if n <= 32 {
        copy_short(dest, src, n);
    } else if (dest as usize).wrapping_sub(src as usize) >= n {
        // `dest` before `src`, or at or after its end: a forward copy reads each byte before a
        // store can reach it.
        copy_forward(dest, src, n);
    } else {
        copy_backward(dest, src, n);
    }
}

/// Compares `n` bytes as unsigned bytes, in order (`memcmp`): negative, zero or positive as
/// `a` sorts before, equal to or after `b`.
///
/// Eight bytes at a time, the last eight overlapping those before (equal, if it gets there);
/// four to seven bytes as two overlapping halves of one number. A difference is ordered by the
/// bytes as a big-endian number, whose most significant byte is the first.
///
/// # Safety
/// `a` and `b` must be valid for reading `n` bytes.
#[inline]
pub unsafe fn compare(a: *const u8, b: *const u8, n: usize) -> i32 {
    if n >= 8 {
        let mut at = 0;
        while at + 8 < n {
            let (x, y) = (load8(a.add(at)), load8(b.add(at)));
            if x != y {
                return order(x.swap_bytes(), y.swap_bytes());
            }
            at += 8;
        }
        let (x, y) = (load8(a.add(n - 8)), load8(b.add(n - 8)));
        return order(x.swap_bytes(), y.swap_bytes());
    }
    if n >= 4 {
        let halves = |p: *const u8| {
            let head = read_unaligned(p.cast::<u32>()).swap_bytes();
            let tail = read_unaligned(p.add(n - 4).cast::<u32>()).swap_bytes();
            (u64::from(head) << 32) | u64::from(tail)
        };
        return order(halves(a), halves(b));
    }
    for at in 0..n {
        let (x, y) = (*a.add(at), *b.add(at));
        if x != y {
            return i32::from(x) - i32::from(y);
        }
    }
    0
}

/// -1, 0 or 1 as `x` is less than, equal to or greater than `y`.
#[inline(always)]
fn order(x: u64, y: u64) -> i32 {
    i32::from(x > y) - i32::from(x < y)
}

/// Up to 32 bytes: every byte is read before any is written, so the ranges may overlap.
#[inline(always)]
unsafe fn copy_short(dest: *mut u8, src: *const u8, n: usize) {
    if n >= 16 {
        let (head, tail) = (load16(src), load16(src.add(n - 16)));
        store16(dest, head);
        store16(dest.add(n - 16), tail);
    } else if n >= 8 {
        let (head, tail) = (load8(src), load8(src.add(n - 8)));
        write_unaligned(dest.cast::<u64>(), head);
        write_unaligned(dest.add(n - 8).cast::<u64>(), tail);
    } else if n >= 4 {
        let head = read_unaligned(src.cast::<u32>());
        let tail = read_unaligned(src.add(n - 4).cast::<u32>());
        write_unaligned(dest.cast::<u32>(), head);
        write_unaligned(dest.add(n - 4).cast::<u32>(), tail);
    } else if n >= 2 {
        let head = read_unaligned(src.cast::<u16>());
        let tail = read_unaligned(src.add(n - 2).cast::<u16>());
        write_unaligned(dest.cast::<u16>(), head);
        write_unaligned(dest.add(n - 2).cast::<u16>(), tail);
    } else if n == 1 {
        *dest = *src;
    }
}

/// More than 32 bytes, from the first to the last. Correct when `dest` is before `src` even if
/// they overlap: a chunk is read before the stores reach it, and the last 16 bytes, read
/// first, are stored last.
#[inline(always)]
unsafe fn copy_forward(dest: *mut u8, src: *const u8, n: usize) {
    if rep_movsb_suits(dest as usize, src as usize, n) {
        // Byte by byte upwards, as the instruction is defined (the direction flag is clear on
        // entry to a function, by the ABI).
        asm!(
            "rep movsb",
            inout("rcx") n => _,
            inout("rdi") dest => _,
            inout("rsi") src => _,
            options(nostack, preserves_flags)
        );
        return;
    }
    let tail = load16(src.add(n - 16));
    let mut at = 0;
    while at + 16 < n {
        store16(dest.add(at), load16(src.add(at)));
        at += 16;
    }
    store16(dest.add(n - 16), tail);
}

/// More than 32 bytes, from the last to the first, for `dest` inside `src`'s range: a chunk is
/// read before the stores reach it, and the first 16 bytes, read first, are stored last.
#[inline(always)]
unsafe fn copy_backward(dest: *mut u8, src: *const u8, n: usize) {
    let head = load16(src);
    let mut end = n;
    while end > 16 {
        store16(dest.add(end - 16), load16(src.add(end - 16)));
        end -= 16;
    }
    store16(dest, head);
}

#[inline(always)]
unsafe fn load16(from: *const u8) -> __m128i {
    _mm_loadu_si128(from.cast())
}

#[inline(always)]
unsafe fn store16(to: *mut u8, value: __m128i) {
    _mm_storeu_si128(to.cast(), value)
}

#[inline(always)]
unsafe fn load8(from: *const u8) -> u64 {
    read_unaligned(from.cast())
}

#[cfg(target_env = "musl")]
mod exported {
    //! The C library's names, for the linker to take instead of musl's.

    use core::ffi::c_int;

    /// # Safety
    /// As C's `memcpy`.
    #[no_mangle]
    pub unsafe extern "C" fn memcpy(dest: *mut u8, src: *const u8, n: usize) -> *mut u8 {
        super::copy(dest, src, n);
        dest
    }

    /// # Safety
    /// As C's `memmove`.
    #[no_mangle]
    pub unsafe extern "C" fn memmove(dest: *mut u8, src: *const u8, n: usize) -> *mut u8 {
        super::copy_overlapping(dest, src, n);
        dest
    }

    /// # Safety
    /// As C's `memcmp`.
    #[no_mangle]
    pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> c_int {
        super::compare(a, b, n)
    }

    /// # Safety
    /// As C's `bcmp`: zero when the bytes are equal.
    #[no_mangle]
    pub unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> c_int {
        super::compare(a, b, n)
    }
}
