// tinygpt serve's HTTP side: OpenAI's endpoints over cpp-httplib, in front of the engine.
//
//   GET  /health                 {"status": "ok", ...}, never behind the API key (for load balancers)
//   GET  /v1/models              the one model served (and /v1/models/ID, its entry)
//   POST /v1/completions         a text (or ids) continued
//   POST /v1/chat/completions    a conversation answered, rendered with the model's chat template
//   POST /v1/explain             a prompt's walk-through, every stage of one block (serve/explain_api.h)
//   GET  /                       the chat page (serve/chat_page.html)
//   GET  /explain                the live step-through (serve/explain_page.html)
//
// Each request is one thread of a fixed pool while it lasts; the engine's one
// thread runs the model for all of them (serve/engine.h). Every limit a client
// could otherwise push on is bounded: the body's size (413; a chunked body, whose
// size httplib does not bound, is refused with 411), the time to send
// the request or take the answer (the connection is closed), the tokens asked
// for (400), the time a reply may take (it ends as if max_tokens were reached),
// the requests waiting (503 with Retry-After). A client's mistake is a 4xx in
// OpenAI's error shape, never a 500.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "tinygpt/serve/engine.h"
#include "tinygpt/serve/openai_api.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}

namespace tg::serve {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;      // 0: a free port, which bind() returns
  std::string api_key;  // not empty: /v1/ asks for "Authorization: Bearer <api_key>"
  int64_t max_body_bytes = int64_t{1} << 20;
  std::chrono::seconds request_timeout{600};  // a reply's whole time, queue included
  // Sending a request, and taking each piece of an answer: a client slower than this is dropped
  // (its stream cancelled), so it cannot hold a thread forever.
  std::chrono::seconds io_timeout{10};
  int64_t handler_threads = 80;  // requests served at once (the rest wait for a thread)
  int64_t max_explain_values = int64_t{1} << 24;  // numbers in one /v1/explain answer, at most
};

class HttpServer {
 public:
  HttpServer(Engine& engine, ServedModel model, ServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Takes the address. Returns the port (the one chosen for port 0); throws
  // tg::Error when the address cannot be had (in use, not this machine's).
  int bind();
  // Answers requests until stop(); blocks, and returns once the requests under way have ended.
  void listen();
  // Stops taking connections (safe from any thread). Replies under way go on
  // until the engine ends them (Engine::shutdown).
  void stop();

 private:
  void add_routes();
  bool authorised(const std::string& authorization_header) const;
  // A completion: checked, queued, answered whole or streamed. Throws ApiError for the client's mistakes.
  void answer(Endpoint endpoint, const httplib::Request& http_request, httplib::Response& response);
  // A step-through: checked, run on the engine's thread between steps. Throws ApiError.
  void explain(const httplib::Request& http_request, httplib::Response& response);

  Engine& engine_;
  const ServedModel model_;
  const ServerOptions options_;
  const int64_t started_;  // Unix seconds: the model's "created"
  std::unique_ptr<httplib::Server> server_;
  int listening_socket_ = -1;  // set by bind()
};

}  // namespace tg::serve
