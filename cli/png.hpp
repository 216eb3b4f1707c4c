// cli/png.hpp — a minimal PNG encoder for 8-bit grey images (corun train --model dcgan's sample grids).
// plot-trace's PNGs are rasterised SVG (rsvg-convert); a pixel grid needs no rasteriser, only zlib.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace corun::cli {

/// The bytes of a PNG file (colour type 0: 8-bit greyscale, no interlace) of `width` x `height` pixels,
/// row after row in `pixels`. Throws corun::Error for sizes that do not match or do not fit a PNG.
std::string encode_png_grey(int width, int height, const std::vector<uint8_t>& pixels);

/// An image grid: `count` images of `size` x `size` floats in [-1, 1] (C order, image after image), laid
/// out `columns` per row with a `gap`-pixel border of mid grey, as 8-bit grey pixels (-1 black, 1 white).
/// Writes the grid's width and height.
std::vector<uint8_t> image_grid(const std::vector<float>& images, int count, int size, int columns, int gap, int& width,
                                int& height);

}  // namespace corun::cli
