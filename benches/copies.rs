//! The static build's forward copy (crates/musl-x86-mem) against one `rep movsb`, by how far
//! the destination lies from the source, at the sizes the server copies: a resource (1 kB), an
//! HTTP/2 frame (16 kB), the answer of 100 repositories (89 kB).
//!
//! `cargo bench --bench copies` (x86-64 only; docs/benchmarks-log.md, "A copy's offset"). On AMD's
//! Zen cores `rep movsb` crawls where the destination is 1 to 15 bytes past a multiple of 4096
//! from the source, which `rep_movsb_suits` leaves to the loop.

#[cfg(target_arch = "x86_64")]
mod copies {
    use divan::counter::BytesCount;
    use divan::{black_box, Bencher};

    const SIZES: [usize; 3] = [1024, 16 * 1024, 89_000];
    /// The destination's distance past a multiple of 4096 from the source: the same page
    /// offset; a gRPC message after its 5-byte header; 21; and 69, 5 past a cache line.
    const OFFSETS: [usize; 4] = [0, 5, 21, 69];

    /// Two buffers of the largest size, each from the start of a page, with room for the
    /// offsets.
    fn buffers() -> (Vec<u8>, Vec<u8>, usize, usize) {
        let len = 89_000 + 4096 + 128;
        let (source, dest) = (vec![7u8; len], vec![1u8; len]);
        let align = |buffer: &Vec<u8>| buffer.as_ptr().align_offset(4096);
        let (s, d) = (align(&source), align(&dest));
        (source, dest, s, d)
    }

    #[divan::bench(consts = OFFSETS, args = SIZES)]
    fn crate_copy<const OFFSET: usize>(bencher: Bencher, n: usize) {
        let (source, mut dest, s, d) = buffers();
        bencher.counter(BytesCount::new(n)).bench_local(|| unsafe {
            musl_x86_mem::copy(
                black_box(dest.as_mut_ptr().add(d + OFFSET)),
                black_box(source.as_ptr().add(s)),
                n,
            )
        });
    }

    #[divan::bench(consts = OFFSETS, args = SIZES)]
    fn rep_movsb<const OFFSET: usize>(bencher: Bencher, n: usize) {
        let (source, mut dest, s, d) = buffers();
        bencher.counter(BytesCount::new(n)).bench_local(|| unsafe {
            std::arch::asm!(
                "rep movsb",
                inout("rcx") n => _,
                inout("rdi") black_box(dest.as_mut_ptr().add(d + OFFSET)) => _,
                inout("rsi") black_box(source.as_ptr().add(s)) => _,
                options(nostack, preserves_flags)
            )
        });
    }
}

fn main() {
    divan::main();
}
