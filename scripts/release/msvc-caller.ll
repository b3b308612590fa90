; A Windows program as MSVC's toolchain makes them (x86_64-pc-windows-msvc, COFF, __imp_
; references resolved by an import library), with no C runtime: it fills 4096 bytes,
; compresses them with blosc2_compress, decompresses them with blosc2_decompress from
; libblosc2.dll, compares, and exits 0 when the bytes came back, 1 otherwise.
; scripts/release/consumer-test.sh compiles it with llc, links it with lld-link against the
; archive's lib/libblosc2.lib (and a kernel32 import library for ExitProcess), runs it under wine.
target triple = "x86_64-pc-windows-msvc"

@src = internal global [4096 x i8] zeroinitializer, align 16
@dst = internal global [8192 x i8] zeroinitializer, align 16
@back = internal global [4096 x i8] zeroinitializer, align 16

declare dllimport void @blosc2_init()
declare dllimport void @blosc2_destroy()
declare dllimport i32 @blosc2_compress(i32, i32, i32, i8*, i32, i8*, i32)
declare dllimport i32 @blosc2_decompress(i8*, i32, i8*, i32)
declare dllimport void @ExitProcess(i32) noreturn

define void @start() {
entry:
  br label %fill
fill:
  %i = phi i64 [ 0, %entry ], [ %inext, %fill ]
  %p = getelementptr [4096 x i8], [4096 x i8]* @src, i64 0, i64 %i
  %v = trunc i64 %i to i8
  %v2 = and i8 %v, 63
  store i8 %v2, i8* %p
  %inext = add i64 %i, 1
  %filled = icmp eq i64 %inext, 4096
  br i1 %filled, label %compress, label %fill
compress:
  call void @blosc2_init()
  %s = getelementptr [4096 x i8], [4096 x i8]* @src, i64 0, i64 0
  %d = getelementptr [8192 x i8], [8192 x i8]* @dst, i64 0, i64 0
  %b = getelementptr [4096 x i8], [4096 x i8]* @back, i64 0, i64 0
  %csize = call i32 @blosc2_compress(i32 5, i32 1, i32 4, i8* %s, i32 4096, i8* %d, i32 8192)
  %compressed = icmp sgt i32 %csize, 0
  br i1 %compressed, label %decompress, label %fail
decompress:
  %dsize = call i32 @blosc2_decompress(i8* %d, i32 %csize, i8* %b, i32 4096)
  %whole = icmp eq i32 %dsize, 4096
  br i1 %whole, label %compare, label %fail
compare:
  %j = phi i64 [ 0, %decompress ], [ %jnext, %same ]
  %pa = getelementptr [4096 x i8], [4096 x i8]* @src, i64 0, i64 %j
  %pb = getelementptr [4096 x i8], [4096 x i8]* @back, i64 0, i64 %j
  %a = load i8, i8* %pa
  %bb = load i8, i8* %pb
  %eq = icmp eq i8 %a, %bb
  br i1 %eq, label %same, label %fail
same:
  %jnext = add i64 %j, 1
  %done = icmp eq i64 %jnext, 4096
  br i1 %done, label %pass, label %compare
pass:
  call void @blosc2_destroy()
  call void @ExitProcess(i32 0)
  unreachable
fail:
  call void @ExitProcess(i32 1)
  unreachable
}
