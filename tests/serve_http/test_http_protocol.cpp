// The KServe v2 infer request checks and responses (serve/http/protocol.hpp), hostile requests included: each
// refused with a ProtocolError that names the field.
#include "serve/http/protocol.hpp"

#include "fake_backend.hpp"

#include <corun/error.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace corun::serve;
using namespace corun::serve::http;

namespace {

const ModelMetadata kModel = fakes::fake_metadata();
const std::string kIds = R"({"name":"ids","datatype":"INT64","shape":[1,2],"data":[3,4]})";

std::string request_with_x(const std::string& x) { return R"({"inputs":[)" + x + "," + kIds + "]}"; }

// The message of the ProtocolError that parsing `body` throws ("" when it parses).
std::string refusal(const std::string& body, std::optional<size_t> json_length = std::nullopt) {
  try {
    parse_infer_request(body, json_length, kModel);
  } catch (const ProtocolError& e) {
    return e.what();
  }
  return "";
}

template <class T>
std::string bytes_of(const std::vector<T>& values) {
  std::string out(values.size() * sizeof(T), '\0');
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

}  // namespace

TEST(HttpProtocol, ParsesFlatAndNestedDataInModelOrder) {
  const std::string x2 = R"({"name":"x","datatype":"FP32","shape":[2,4],"data":[[1,2,3,4],[5,6,7,8.5]]})";
  const std::string body = R"({"id":"r1","inputs":[{"name":"ids","datatype":"INT64","shape":[2,2],"data":[3,4,5,6]},)" +
                           x2 + "]}";
  const InferRequest r = parse_infer_request(body, std::nullopt, kModel);
  ASSERT_EQ(r.inputs.size(), 2u);
  EXPECT_EQ(r.inputs[0].name, "x");
  EXPECT_EQ(r.inputs[0].shape, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(r.inputs[0].data.back(), 8.5f);
  EXPECT_EQ(r.id, std::optional<std::string>("r1"));
  EXPECT_FALSE(r.priority);
  EXPECT_EQ(r.rows, 2);
  ASSERT_EQ(r.outputs.size(), 2u);  // every output, as JSON
  EXPECT_FALSE(r.outputs[0].binary);
  // rows differ: the ids have 1 row
  const std::string mixed = R"({"inputs":[)" + kIds + "," + x2 + "]}";
  EXPECT_NE(refusal(mixed).find("has 2 rows, the inputs before it 1"), std::string::npos) << refusal(mixed);
}

TEST(HttpProtocol, RefusesTruncatedJson) {
  const std::string msg = refusal(R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1,4],"data":[1,2)");
  EXPECT_NE(msg.find("invalid JSON"), std::string::npos) << msg;
  EXPECT_NE(refusal("").find("invalid JSON"), std::string::npos);
  EXPECT_NE(refusal("[1,2]").find("must be a JSON object"), std::string::npos);
}

TEST(HttpProtocol, NamesTheWrongField) {
  const std::string x = R"({"name":"x","datatype":"FP32","shape":[1,4],"data":[1,2,3,4]})";
  EXPECT_EQ(refusal(request_with_x(x)), "");
  EXPECT_EQ(refusal(request_with_x(R"({"name":"x","datatype":"INT8","shape":[1,4],"data":[1,2,3,4]})")),
            "inputs[0].datatype: 'INT8' but model input 'x' is FP32 (send FP32 values)");
  EXPECT_EQ(refusal(request_with_x(R"({"name":"x","datatype":"FP32","shape":[2,3],"data":[1,2,3,4,5,6]})")),
            "inputs[0].shape: [2,3] but model input 'x' is [-1,4]");
  EXPECT_EQ(refusal(request_with_x(R"({"name":"x","datatype":"FP32","shape":[1,4,1],"data":[1,2,3,4]})")),
            "inputs[0].shape: [1,4,1] but model input 'x' is [-1,4]");
  EXPECT_EQ(refusal(request_with_x(R"({"name":"x","datatype":"FP32","shape":[1,4],"data":[1,2,3]})")),
            "inputs[0].data holds 3 values but the shape [1,4] needs 4");
  EXPECT_EQ(refusal(request_with_x(R"({"name":"x","datatype":"FP32","shape":[1,4],"data":[1,2,"3",4]})")),
            "inputs[0].data[2] must be a number (FP32), not \"3\"");
  EXPECT_EQ(refusal(R"({"inputs":[)" + kIds + "]}"), "inputs: model input 'x' (FP32 [-1,4]) is missing");
  EXPECT_EQ(refusal(R"({"inputs":[)" + x + "," + x + "]}"), "inputs[1].name: input 'x' is given twice");
  EXPECT_NE(refusal(request_with_x(R"({"name":"w","datatype":"FP32","shape":[1,4],"data":[1,2,3,4]})"))
                .find("inputs[0].name: model 'double' has no input \"w\"; its inputs: 'x', 'ids'"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"input":[]})").find("unknown member 'input'"), std::string::npos);
  EXPECT_EQ(refusal(request_with_x(R"({"name":"x","datatype":"FP32","shape":[5,4],"data":[]})")),
            "inputs[0].shape: [5,4] but model input 'x' is [-1,4]: 5 rows, more than the server's --max-batch 4");
}

TEST(HttpProtocol, RefusesHugeDeclaredShapesBeforeAllocating) {
  // 1e18 rows: refused by the batch limit; as a float it is no integer at all.
  EXPECT_NE(refusal(request_with_x(R"({"name":"x","datatype":"FP32","shape":[1000000000000000000,4],"data":[]})"))
                .find("more than the server's --max-batch"),
            std::string::npos);
  EXPECT_EQ(refusal(request_with_x(R"({"name":"x","datatype":"FP32","shape":[1e18,4],"data":[]})")),
            "inputs[0].shape[0] must be a positive integer, not 1e+18");
  EXPECT_NE(refusal(request_with_x(R"({"name":"x","datatype":"FP32","shape":[18446744073709551615,4],"data":[]})"))
                .find("must be a positive integer"),
            std::string::npos);
  // A model with a free inner dimension: the product overflows, or exceeds what the body can hold.
  ModelMetadata free = kModel;
  free.inputs = {{"x", "FP32", {-1, -1, -1}, 0}};
  for (const char* shape : {"[1,4611686018427387904,4611686018427387904]", "[1,100000,100000]"}) {
    const std::string body = R"({"inputs":[{"name":"x","datatype":"FP32","shape":)" + std::string(shape) +
                             R"(,"parameters":{"binary_data_size":4}}]})";
    try {
      parse_infer_request(body, std::nullopt, free);
      ADD_FAILURE() << shape << " was accepted";
    } catch (const ProtocolError& e) {
      EXPECT_NE(std::string(e.what()).find("declares more values than the body"), std::string::npos) << e.what();
    }
  }
}

TEST(HttpProtocol, RefusesNonFiniteAndOutOfRangeValues) {
  EXPECT_NE(refusal(request_with_x(R"({"name":"x","datatype":"FP32","shape":[1,4],"data":[1,2,3,1e39]})"))
                .find("inputs[0].data[3]: 1e+39 is not a finite FP32 value"),
            std::string::npos);
  EXPECT_NE(refusal(request_with_x(R"({"name":"x","datatype":"FP32","shape":[1,4],"data":[1,NaN,3,4]})"))
                .find("invalid JSON"),
            std::string::npos);
  const std::string x = R"({"name":"x","datatype":"FP32","shape":[1,4],"data":[1,2,3,4]})";
  EXPECT_EQ(refusal(R"({"inputs":[)" + x + R"(,{"name":"ids","datatype":"INT64","shape":[1,2],"data":[3,10]}]})"),
            "inputs[1].data[1]: 10 is outside the ids input 'ids' takes, [0, 10)");
  EXPECT_EQ(refusal(R"({"inputs":[)" + x + R"(,{"name":"ids","datatype":"INT64","shape":[1,2],"data":[3,1.5]}]})"),
            "inputs[1].data[1] must be an integer (INT64), not 1.5");
  EXPECT_EQ(refusal(R"({"inputs":[)" + x + R"(,{"name":"ids","datatype":"FP32","shape":[1,2],"data":[3,1]}]})"),
            "inputs[1].datatype: 'FP32' but model input 'ids' takes integer ids: INT64 or INT32");
  EXPECT_EQ(refusal(R"({"inputs":[)" + x + R"(,{"name":"ids","datatype":"INT32","shape":[1,2],"data":[3,9]}]})"), "");
}

TEST(HttpProtocol, ReadsTheBinaryDataExtension) {
  const std::string header = R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1,4],)"
                             R"("parameters":{"binary_data_size":16}},)"
                             R"({"name":"ids","datatype":"INT32","shape":[1,2],"parameters":{"binary_data_size":8}}],)"
                             R"("outputs":[{"name":"z","parameters":{"binary_data":true}}],"parameters":{"priority":1}})";
  const std::string body = header + bytes_of<float>({0.5f, -1.0f, 2.0f, 3.0f}) + bytes_of<int32_t>({7, 9});
  const InferRequest r = parse_infer_request(body, header.size(), kModel);
  EXPECT_EQ(r.inputs[0].data, (std::vector<float>{0.5f, -1.0f, 2.0f, 3.0f}));
  EXPECT_EQ(r.inputs[1].data, (std::vector<float>{7.0f, 9.0f}));
  EXPECT_TRUE(r.priority);
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs[0].index, 1u);
  EXPECT_TRUE(r.outputs[0].binary);

  EXPECT_NE(refusal(body + "xx", header.size()).find("2 bytes after the JSON header"), std::string::npos);
  EXPECT_NE(refusal(body.substr(0, body.size() - 4), header.size()).find("only 4 are left"), std::string::npos);
  std::string wrong = header;
  wrong.replace(wrong.find("16"), 2, "12");
  EXPECT_NE(refusal(wrong + bytes_of<float>({1, 2, 3}) + bytes_of<int32_t>({7, 9}), wrong.size())
                .find("inputs[0].parameters.binary_data_size: 12 bytes, but [1,4] of FP32 is 16"),
            std::string::npos);
  const std::string nan = header + bytes_of<float>({0.5f, std::nanf(""), 2.0f, 3.0f}) + bytes_of<int32_t>({7, 9});
  EXPECT_NE(refusal(nan, header.size()).find("inputs[0] (binary data)[1]: nan is not a finite FP32 value"),
            std::string::npos);
  EXPECT_THROW(parse_header_length("12x", 100), ProtocolError);
  EXPECT_THROW(parse_header_length("101", 100), ProtocolError);
  EXPECT_EQ(parse_header_length("100", 100), 100u);
}

TEST(HttpProtocol, ReadsPriorityAsTritonDoes) {
  const std::string x = R"({"name":"x","datatype":"FP32","shape":[1,4],"data":[1,2,3,4]})";
  auto with = [&](const std::string& p) { return R"({"parameters":{"priority":)" + p + R"(},"inputs":[)" + x + "," + kIds + "]}"; };
  EXPECT_TRUE(parse_infer_request(with("1"), std::nullopt, kModel).priority);
  EXPECT_TRUE(parse_infer_request(with("true"), std::nullopt, kModel).priority);
  EXPECT_FALSE(parse_infer_request(with("0"), std::nullopt, kModel).priority);
  EXPECT_FALSE(parse_infer_request(with("2"), std::nullopt, kModel).priority);
  EXPECT_NE(refusal(with("-1")).find("parameters.priority must be an unsigned integer"), std::string::npos);
  EXPECT_NE(refusal(with("\"high\"")).find("parameters.priority"), std::string::npos);
}

TEST(HttpProtocol, FormatsJsonAndBinaryResponses) {
  InferRequest request = parse_infer_request(request_with_x(R"({"name":"x","datatype":"FP32","shape":[1,4],"data":[1,2,3,4]})"),
                                             std::nullopt, kModel);
  request.id = "abc";
  InferResult result;
  result.outputs = {{"y", {1, 4}, {0.1f, 2, 3, 4}}, {"z", {1, 1}, {7}}};
  const InferResponse json_response = format_infer_response(kModel, request, result);
  EXPECT_EQ(json_response.content_type, "application/json");
  const corun::json::Value doc = corun::json::parse(json_response.body);
  EXPECT_EQ(doc["id"], "abc");
  EXPECT_EQ(doc["model_name"], "double");
  EXPECT_EQ(doc["outputs"][0]["shape"], corun::json::Value({1, 4}));
  EXPECT_EQ(static_cast<float>(doc["outputs"][0]["data"][0].get<double>()), 0.1f);  // the same bits back

  request.outputs = {{1, true}};
  const InferResponse binary = format_infer_response(kModel, request, result);
  ASSERT_TRUE(binary.json_length.has_value());
  const corun::json::Value head = corun::json::parse(binary.body.substr(0, *binary.json_length));
  EXPECT_EQ(head["outputs"].size(), 1u);
  EXPECT_EQ(head["outputs"][0]["parameters"]["binary_data_size"], 4);
  EXPECT_EQ(binary.body.substr(*binary.json_length), bytes_of<float>({7.0f}));

  result.outputs[1].shape = {2, 1};
  EXPECT_THROW(format_infer_response(kModel, request, result), corun::Error);
}

TEST(HttpProtocol, DescribesTheModel) {
  const corun::json::Value m = model_metadata_json(kModel);
  EXPECT_EQ(m["name"], "double");
  EXPECT_EQ(m["versions"], corun::json::Value({"1"}));
  EXPECT_EQ(m["inputs"][0]["shape"], corun::json::Value({-1, 4}));
  EXPECT_EQ(m["inputs"][1]["datatype"], "INT64");
  EXPECT_EQ(error_body("a \"b\""), R"({"error":"a \"b\""})");
}
