// npy.hpp — NumPy .npy files, the arrays users bring to `flashlab run` and take away from it
// (format: numpy.lib.format, "A Simple File Format for NumPy Arrays").
//
// A file is the magic "\x93NUMPY", a version byte pair (1.0, 2.0 or 3.0), the header length
// (little-endian u16 for 1.0, u32 for 2.0 and 3.0), then the header: a Python dict literal
// {'descr': '<f2', 'fortran_order': False, 'shape': (N, d), } padded with spaces to a multiple of 64
// bytes and ended by '\n' (3.0 allows UTF-8 in it), then the elements in C order.
//
// flashlab reads and writes three element types, little-endian only: '<f2' (fp16), '<f4' (fp32)
// and '<u2' (bf16 as its 16 bits: NumPy has no bfloat16). Values are held as float, which holds
// every value of the three exactly, so a read followed by a write gives the same bytes (NaN
// payloads aside).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "flashlab/config/config.hpp"

namespace flashlab {

/// The element types of .npy files flashlab handles.
enum class NpyType : std::uint8_t { f2, f4, u2 };

/// One array: its element type, its shape (C order, outermost first; {} for a scalar) and its
/// values as float (prod(shape) of them).
struct NpyArray {
  NpyType type = NpyType::f4;
  std::vector<std::int64_t> shape;
  std::vector<float> values;
};

/// The descr string of t: "<f2", "<f4", "<u2".
std::string_view npy_descr(NpyType t);
/// The .npy type that holds dtype t: fp16 '<f2', bf16 '<u2' (its bits), fp32 '<f4'.
NpyType npy_type(Dtype t);
/// "(3, 4)", "(5,)", "()": a shape as Python writes a tuple.
std::string npy_shape_text(const std::vector<std::int64_t>& shape);

/// The whole file of `a`: a version 1.0 header (2.0 when the header would not fit 65,535 bytes),
/// padded so that the data starts at a multiple of 64 bytes. Throws ConfigError("npy shape") when
/// values.size() is not the product of the shape.
std::string encode_npy(const NpyArray& a);

/// Parses a whole file. Throws ConfigError naming what is wrong: "npy magic" (not a .npy file),
/// "npy version" (not 1.0, 2.0, 3.0), "npy header" (truncated, not a dict, a missing or unknown
/// key), "npy descr" (a type other than the three; a big-endian type is refused by name),
/// "npy fortran_order" (True: Fortran order is refused), "npy shape" (negative, or more than 2^40
/// elements), "npy data" (fewer or more bytes than the shape needs).
NpyArray decode_npy(std::string_view bytes);

/// Reads and decodes `path`. Throws ConfigError whose field starts with the path ("q.npy: npy
/// descr = ..."): a path that is not a regular file, cannot be read, or is not a valid file; the
/// file's size is checked against its header before its data is read.
NpyArray read_npy(const std::string& path);

}  // namespace flashlab
