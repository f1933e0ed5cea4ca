// Chat templates (tokenizer/chat_template.h) and the Jinja interpreter behind
// them (tokenizer/jinja/): every fixture of tests/fixtures/chat_templates/,
// rendered by python3-jinja2 in Hugging Face's environment
// (tests/reference/make_chat_template_fixtures.py), must come out byte for
// byte; what jinja2 refused must be refused; what we do not support must say
// so with its line; hostile templates must end in an error, not a hang.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tinygpt/tokenizer/chat_template.h"
#include "tinygpt/tokenizer/jinja/template.h"

using namespace tg::tokenizer;
using nlohmann::ordered_json;

namespace {

const std::filesystem::path kFixtures = "tests/fixtures/chat_templates";

ordered_json read_fixture(const std::string& name) {
  std::ifstream file(kFixtures / name, std::ios::binary);
  REQUIRE_MESSAGE(file.good(), "missing fixture " << (kFixtures / name).string());
  std::ostringstream text;
  text << file.rdbuf();
  return ordered_json::parse(text.str());
}

// Checks that `render` fails as jinja2 did in `error` ({"type", "message"}):
// with the same message, except for syntax errors and the few failures whose
// wording is ours (`own_words`).
template <class Render>
void check_refused(const ordered_json& error, Render render, bool own_words = false) {
  const std::string type = error["type"];
  const std::string message = error["message"];
  try {
    const std::string text = render();
    FAIL("rendered \"" << text << "\" where jinja2 raised " << type << ": " << message);
  } catch (const TemplateRaisedError& raised) {
    CHECK_MESSAGE(type == "TemplateError", raised.what());
    CHECK(raised.template_message() == message);
  } catch (const TemplateError& refused) {
    CHECK_MESSAGE(type != "TemplateError", "jinja2 raised through raise_exception, we did not: " << refused.what());
    const bool syntax = type == "TemplateSyntaxError" || type == "SyntaxError";
    if (!syntax && !own_words) CHECK(refused.description() == message);
  }
}

void check_chat_fixture(const std::string& file_name) {
  const ordered_json fixture = read_fixture(file_name);
  const std::string template_text = fixture["template"];
  REQUIRE(fixture["cases"].size() >= 10);
  for (const ordered_json& c : fixture["cases"]) {
    const std::string case_name = c["name"];
    INFO(file_name << " case " << case_name);
    ChatTemplateOptions options;
    options.add_generation_prompt = c["add_generation_prompt"];
    if (c.contains("bos_token")) options.bos_token = c["bos_token"].get<std::string>();
    if (c.contains("eos_token")) options.eos_token = c["eos_token"].get<std::string>();
    if (c.contains("tools")) options.tools = c["tools"];
    options.extra_variables = c["extra"];
    options.template_name = fixture["name"].get<std::string>() + "'s chat template";
    auto render = [&] { return render_chat(template_text, c["messages"], options); };
    if (c.contains("expected")) CHECK(render() == c["expected"].get<std::string>());
    else check_refused(c["error"], render);
  }
}

std::string render(const std::string& text, const ordered_json& variables = ordered_json::object(),
                   const jinja::RenderLimits& limits = {}) {
  return jinja::Template(text).render(variables, limits);
}

// The description of the TemplateError that rendering `text` throws, with its line.
std::string failure(const std::string& text, int* line = nullptr, const jinja::RenderLimits& limits = {}) {
  try {
    render(text, ordered_json::object(), limits);
  } catch (const TemplateError& error) {
    if (line) *line = error.line();
    return error.description();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("chat template jinja: Llama 3's template renders as jinja2 renders it") { check_chat_fixture("llama3.json"); }
TEST_CASE("chat template jinja: Llama 3.1's template (tools, tojson(indent=4), tool calls) renders as jinja2 renders it") {
  check_chat_fixture("llama31.json");
}
TEST_CASE("chat template jinja: Qwen3's template, with thinking, renders as jinja2 renders it") { check_chat_fixture("qwen3.json"); }
TEST_CASE("chat template jinja: SmolLM2's template renders as jinja2 renders it") { check_chat_fixture("smollm2.json"); }
TEST_CASE("chat template jinja: Mistral v0.1's template renders, and raises on roles out of order") {
  check_chat_fixture("mistral_v01.json");
}
TEST_CASE("chat template jinja: Mistral v0.3's template (namespace, selectattr, tools) renders as jinja2 renders it") {
  check_chat_fixture("mistral_v03.json");
}
TEST_CASE("chat template jinja: a Zephyr/TinyLlama template renders as jinja2 renders it") { check_chat_fixture("zephyr.json"); }
TEST_CASE("chat template jinja: the ChatML default renders as jinja2 renders it") {
  check_chat_fixture("chatml.json");
  CHECK(read_fixture("chatml.json")["template"] == chatml_template());
}

TEST_CASE("chat template jinja: every snippet renders (or fails) as in jinja2") {
  const ordered_json fixture = read_fixture("snippets.json");
  REQUIRE(fixture["cases"].size() >= 50);
  for (const ordered_json& c : fixture["cases"]) {
    const std::string name = c["name"];
    const std::string text = c["template"];
    INFO("snippet " << name << ": " << text);
    auto rendered = [&] { return render(text, c["variables"]); };
    if (c.contains("expected")) {
      try {
        CHECK(rendered() == c["expected"].get<std::string>());
      } catch (const TemplateError& error) {
        FAIL("threw " << error.what());
      }
    } else {
      // jinja2's sandbox and Python's % formatting speak of things we do not have.
      const bool own_words = name == "error_mutating_method" || name == "error_odd_of_string";
      check_refused(c["error"], rendered, own_words);
    }
  }
}

TEST_CASE("chat template jinja: unsupported constructs are refused with their name and line") {
  int line = 0;
  CHECK(failure("line one\n{{ 'a b'|wordwrap }}", &line) == "the filter 'wordwrap' is not supported");
  CHECK(line == 2);
  CHECK(failure("\n\n{% include 'other.jinja' %}", &line) == "the tag 'include' is not supported");
  CHECK(line == 3);
  CHECK(failure("{% filter upper %}x{% endfilter %}") == "the tag 'filter' is not supported");
  CHECK(failure("{% raw %}{{ x }}{% endraw %}") == "the tag 'raw' is not supported");
  CHECK(failure("{% for x in xs recursive %}{% endfor %}") == "recursive for loops are not supported");
  CHECK(failure("{{ 1 is escaped }}") == "the test 'escaped' is not supported");
  CHECK(failure("{{ '{}'.format(1) }}") == "the method 'format' of str is not supported");
  CHECK(failure("{{ '%s' % 1 }}") == "string formatting with '%' is not supported");
  CHECK(failure("a\n{% if x %}\nunclosed", &line) == "the template ended before 'elif' or 'else' or 'endif'");
  CHECK(failure("{{ 1 + }}") == "unexpected '}}' in an expression");
}

TEST_CASE("chat template jinja: the error of raise_exception names the template, the line and the message") {
  try {
    render_chat("{% for m in messages %}\n{{ raise_exception('No ' + m.role + ' here') }}{% endfor %}",
                ordered_json::parse(R"([{"role": "tool", "content": ""}])"));
    FAIL("no error");
  } catch (const TemplateRaisedError& error) {
    CHECK(error.template_message() == "No tool here");
    CHECK(error.line() == 2);
    CHECK(std::string(error.what()) == "chat template line 2: raise_exception: No tool here");
  }
  // TemplateError is a TokenizerError, and so a tg::Error.
  CHECK_THROWS_AS(render_chat("{{ raise_exception('x') }}", ordered_json::array()), TokenizerError);
}

TEST_CASE("chat template jinja: hostile templates end in an error, not a hang or a crash") {
  // Loops: 10^10 iterations are cut at the iteration limit.
  CHECK(failure("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}")
            .find("loop iterations") != std::string::npos);
  // Output: 100 MB of text is cut at 16 MiB.
  CHECK(failure("{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}").find("output exceeds") != std::string::npos);
  // A string doubled in a loop, and one repeated 10^12 times.
  CHECK(failure("{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}")
            .find("exceeds the limit") != std::string::npos);
  CHECK(failure("{{ 'x' * 1000000000000 }}").find("exceeds the limit") != std::string::npos);
  CHECK(failure("{{ [1] * 1000000000000 }}").find("exceeds the limit") != std::string::npos);
  // Work: many strings below the size limit still add up.
  CHECK(failure("{% set s = 'x' * 10000000 %}{% for i in range(1000) %}{% set t = s ~ i %}{% endfor %}")
            .find("bytes of strings and lists") != std::string::npos);
  // Reading a long string again and again counts as work; splitting one into
  // millions of characters is refused before it allocates them.
  for (const char* reread : {"{{ s[0] }}", "{{ s[1:2] }}", "{{ s|length }}", "{{ s == s }}", "{{ s.startswith('x') }}"})
    CHECK(failure(std::string("{% set s = 'x' * 10000000 %}{% for i in range(100000) %}") + reread + "{% endfor %}")
              .find("bytes of strings and lists") != std::string::npos);
  CHECK(failure("{% set s = 'é' * 5000000 %}{% for c in s %}{% endfor %}").find("items exceeds the limit") !=
        std::string::npos);
  CHECK(failure("{{ ('é' * 5000000)|list|length }}").find("items exceeds the limit") != std::string::npos);
  // Text written and thrown away (a block set in a loop) is work too.
  CHECK(failure("{% set s = 'x' * 1000000 %}{% for i in range(1000) %}{% set t %}{{ s }}{% endset %}{% endfor %}")
            .find("bytes of strings and lists") != std::string::npos);
  // Recursion: a macro calling itself, lists nested in a loop.
  CHECK(failure("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}").find("macros nest more than") !=
        std::string::npos);
  CHECK(failure("{% set ns = namespace(l=[]) %}{% for i in range(100000) %}{% set ns.l = [ns.l] %}{% endfor %}")
            .find("nest deeper than") != std::string::npos);
  // Syntax nested 100,000 deep: refused by the parser before it recurses that far.
  CHECK(failure("{{ " + std::string(100000, '(') + "1" + std::string(100000, ')') + " }}").find("nests deeper") != std::string::npos);
  std::string ifs;
  for (int i = 0; i < 5000; ++i) ifs += "{% if true %}";
  CHECK(failure(ifs).find("nests deeper") != std::string::npos);
  CHECK(failure("{{ [" + std::string(5000, '[') + std::string(5000, ']') + "] }}").find("nests deeper") !=
        std::string::npos);
  // Smaller limits are honoured.
  jinja::RenderLimits small;
  small.max_output_bytes = 10;
  CHECK(failure("{{ 'abcdefghijk' }}", nullptr, small).find("output exceeds 10 bytes") != std::string::npos);
  small = {};
  small.max_loop_iterations = 5;
  CHECK(failure("{% for i in range(6) %}{% endfor %}", nullptr, small).find("loop iterations") != std::string::npos);
  // Integers overflow into an error, not into wrapped values.
  CHECK(failure("{{ 9223372036854775807 + 1 }}").find("integer overflow") != std::string::npos);
  CHECK(failure("{{ 2 ** 64 }}").find("integer overflow") != std::string::npos);
  CHECK(failure("{{ 99999999999999999999 }}").find("does not fit in 64 bits") != std::string::npos);
}

TEST_CASE("chat template jinja: render_chat passes Hugging Face's variables") {
  const ordered_json messages = ordered_json::parse(R"([{"role": "user", "content": "hi"}])");
  // tools and documents are none without tools, bos_token undefined without a token.
  CHECK(render_chat("{{ tools is none }} {{ documents is none }} {{ bos_token is defined }} {{ add_generation_prompt }}",
                    messages) == "True True False False");
  ChatTemplateOptions options;
  options.bos_token = "<s>";
  options.add_generation_prompt = true;
  options.tools = ordered_json::parse(R"([{"name": "f"}])");
  options.extra_variables = {{"enable_thinking", false}, {"add_generation_prompt", false}};
  CHECK(render_chat("{{ bos_token }}{{ tools[0].name }} {{ enable_thinking }} {{ add_generation_prompt }}", messages,
                    options) == "<s>f False False");
  CHECK(render_chat(chatml_template(), messages, options) == "<|im_start|>user\nhi<|im_end|>\n");
  // Parsed once, rendered twice.
  const jinja::Template chatml(chatml_template(), "ChatML");
  CHECK(render_chat(chatml, messages, options) == render_chat(chatml, messages, options));
  CHECK_THROWS_AS(render_chat(chatml_template(), ordered_json::object()), TemplateError);
}

TEST_CASE("chat template jinja: Qwen3's tokenizer_config.json gives the template its fixture renders") {
  std::ifstream file(kFixtures / "qwen3_tokenizer_config.json", std::ios::binary);
  std::ostringstream config;
  config << file.rdbuf();
  const std::optional<std::string> found = chat_template_from_config(config.str());
  REQUIRE(found.has_value());
  CHECK(*found == read_fixture("qwen3.json")["template"].get<std::string>());
  ChatTemplateOptions options;
  options.eos_token = "<|im_end|>";
  options.add_generation_prompt = true;
  CHECK(render_chat(*found, ordered_json::parse(R"([{"role": "user", "content": "Hi"}])"), options) ==
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
}

TEST_CASE("chat template jinja: the template is found in tokenizer_config.json") {
  CHECK(chat_template_from_config(R"({"chat_template": "{{ x }}", "eos_token": "</s>"})") == "{{ x }}");
  CHECK(chat_template_from_config(R"({"chat_template": [{"name": "tool_use", "template": "T"},
                                                        {"name": "default", "template": "D"}]})") == "D");
  CHECK_FALSE(chat_template_from_config(R"({"eos_token": "</s>"})").has_value());
  CHECK_FALSE(chat_template_from_config(R"({"chat_template": null})").has_value());
  CHECK_THROWS_AS(chat_template_from_config(R"({"chat_template": [{"name": "tool_use", "template": "T"}]})"),
                  TemplateError);
  CHECK_THROWS_AS(chat_template_from_config(R"({"chat_template": 3})"), TemplateError);
  CHECK_THROWS_AS(chat_template_from_config("{not json"), TemplateError);
  CHECK_THROWS_AS(chat_template_from_config(std::string(1000, '[') + std::string(1000, ']')), TemplateError);
}
