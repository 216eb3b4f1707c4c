// PNG (ISO/IEC 15948): the signature, an IHDR chunk, one IDAT chunk holding the zlib stream of the rows
// (each prefixed by filter type 0), and IEND; every chunk is length, type, data, CRC-32 of type and data.
#include "cli/png.hpp"

#include "base/check.hpp"

#include <zlib.h>

#include <algorithm>
#include <cmath>

namespace corun::cli {
namespace {

void put_u32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xff));
}

void put_chunk(std::string& out, const char* type, const std::string& data) {
  put_u32(out, static_cast<uint32_t>(data.size()));
  const std::string body = std::string(type, 4) + data;
  out += body;
  put_u32(out, static_cast<uint32_t>(
                   crc32(0L, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size()))));
}

}  // namespace

std::string encode_png_grey(int width, int height, const std::vector<uint8_t>& pixels) {
  CORUN_CHECK(width >= 1 && height >= 1 && width <= 16384 && height <= 16384, Status::invalid_argument,
              "PNG: the image must be 1 to 16384 pixels wide and high, got " << width << "x" << height);
  const size_t w = static_cast<size_t>(width), h = static_cast<size_t>(height);
  CORUN_CHECK(pixels.size() == w * h, Status::invalid_argument,
              "PNG: " << pixels.size() << " pixels for a " << width << "x" << height << " image");
  std::string raw;
  raw.reserve((w + 1) * h);
  for (size_t y = 0; y < h; ++y) {
    raw.push_back('\0');  // filter type 0 (none)
    raw.append(reinterpret_cast<const char*>(pixels.data() + y * w), w);
  }
  uLongf packed_size = compressBound(static_cast<uLong>(raw.size()));
  std::string packed(packed_size, '\0');
  const int rc = compress2(reinterpret_cast<Bytef*>(packed.data()), &packed_size,
                           reinterpret_cast<const Bytef*>(raw.data()), static_cast<uLong>(raw.size()), 9);
  CORUN_CHECK(rc == Z_OK, Status::runtime_error, "PNG: zlib compress2 failed (" << rc << ")");
  packed.resize(packed_size);
  std::string ihdr;
  put_u32(ihdr, static_cast<uint32_t>(width));
  put_u32(ihdr, static_cast<uint32_t>(height));
  ihdr += std::string("\x08\x00\x00\x00\x00", 5);  // bit depth 8, greyscale, deflate, adaptive filters, no interlace
  std::string png = "\x89PNG\r\n\x1a\n";
  put_chunk(png, "IHDR", ihdr);
  put_chunk(png, "IDAT", packed);
  put_chunk(png, "IEND", "");
  return png;
}

std::vector<uint8_t> image_grid(const std::vector<float>& images, int count, int size, int columns, int gap, int& width,
                                int& height) {
  CORUN_CHECK(count >= 1 && size >= 1 && columns >= 1 && gap >= 0, Status::invalid_argument,
              "image grid: count, size and columns must be positive");
  CORUN_CHECK(images.size() >= static_cast<size_t>(count) * static_cast<size_t>(size) * static_cast<size_t>(size),
              Status::invalid_argument,
              "image grid: " << images.size() << " values for " << count << " images of " << size << "x" << size);
  const int rows = (count + columns - 1) / columns;
  width = columns * size + (columns + 1) * gap;
  height = rows * size + (rows + 1) * gap;
  std::vector<uint8_t> px(static_cast<size_t>(width) * static_cast<size_t>(height), 128);
  for (int i = 0; i < count; ++i) {
    const int x0 = gap + (i % columns) * (size + gap), y0 = gap + (i / columns) * (size + gap);
    const float* img = images.data() + static_cast<size_t>(i) * static_cast<size_t>(size) * static_cast<size_t>(size);
    for (int y = 0; y < size; ++y)
      for (int x = 0; x < size; ++x) {
        const float v = img[y * size + x];
        const float grey = std::isfinite(v) ? std::clamp((v + 1.0f) * 127.5f, 0.0f, 255.0f) : 0.0f;
        px[static_cast<size_t>(y0 + y) * static_cast<size_t>(width) + static_cast<size_t>(x0 + x)] =
            static_cast<uint8_t>(std::lround(grey));
      }
  }
  return px;
}

}  // namespace corun::cli
