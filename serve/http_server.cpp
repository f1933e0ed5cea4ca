#include "tinygpt/serve/http_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <iostream>

#include "tinygpt/serve/answers.h"
#include "tinygpt/serve/chat_page.h"
#include "tinygpt/serve/explain_api.h"
#include "tinygpt/serve/explain_page.h"

namespace tg::serve {

namespace {

constexpr const char* kJson = "application/json";
constexpr int kListenBacklog = 512;  // connections the kernel holds before the accept loop takes them

// The paths we answer, and the method each takes (any other method: 405).
struct Route {
  const char* path;
  const char* method;
};
constexpr std::array<Route, 7> kRoutes = {{{"/health", "GET"},
                                           {"/v1/models", "GET"},
                                           {"/v1/completions", "POST"},
                                           {"/v1/chat/completions", "POST"},
                                           {"/v1/explain", "POST"},
                                           {"/", "GET"},
                                           {"/explain", "GET"}}};

void send_error(httplib::Response& response, const ApiError& error) {
  response.status = error.status;
  response.set_content(dump_json(error_body(error)), kJson);
}

int64_t unix_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// httplib's own refusals (no route, a body too large, a request it could not
// read), in OpenAI's error shape. Our handlers' errors already have a body.
void explain_status(const httplib::Request& request, httplib::Response& response, int64_t max_body_bytes) {
  if (response.status == 404) {
    for (const Route& route : kRoutes)
      if (request.path == route.path) {
        response.set_header("Allow", route.method);
        send_error(response, ApiError(405, request.method + " " + request.path + " is not allowed; use " +
                                               route.method));
        return;
      }
    send_error(response, ApiError(404, "no such endpoint: " + request.method + " " + request.path +
                                           " (tinygpt serve has /v1/completions, /v1/chat/completions, /v1/models, "
                                           "/v1/explain, /health, / and /explain)"));
  } else if (response.status == 413) {
    send_error(response, ApiError(413, "the request body is larger than this server's limit of " +
                                           std::to_string(max_body_bytes) + " bytes (serve --max-body-bytes)"));
  } else {
    send_error(response, ApiError(response.status, "the request could not be read (HTTP " +
                                                       std::to_string(response.status) + ")"));
  }
}

// Compares every byte whatever the first difference, so that the time taken
// says nothing of how much of a guessed key was right.
bool same_key(std::string_view given, std::string_view key) {
  unsigned char difference = given.size() != key.size();
  for (size_t index = 0; index < key.size(); ++index)
    difference |= static_cast<unsigned char>(key[index] ^ (index < given.size() ? given[index] : 0));
  return difference == 0;
}

}  // namespace

HttpServer::HttpServer(Engine& engine, ServedModel model, ServerOptions options)
    : engine_(engine),
      model_(std::move(model)),
      options_(std::move(options)),
      started_(unix_seconds()),
      server_(std::make_unique<httplib::Server>()) {
  const size_t threads = static_cast<size_t>(options_.handler_threads);
  server_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server_->set_payload_max_length(static_cast<size_t>(options_.max_body_bytes));
  server_->set_read_timeout(options_.io_timeout);
  server_->set_write_timeout(options_.io_timeout);
  // An idle kept-alive connection holds a thread, and delays the end of a shutdown, this long at most.
  server_->set_keep_alive_timeout(2);
  // In place of httplib's default, which sets SO_REUSEPORT: with it a second server on the same port
  // starts without a word and the kernel shares the connections between the two.
  server_->set_socket_options([this](int socket) {
    const int yes = 1;
    setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);  // a restart need not wait out TIME_WAIT
    listening_socket_ = socket;
  });
  add_routes();
}

HttpServer::~HttpServer() = default;

int HttpServer::bind() {
  if (options_.port == 0) {
    const int port = server_->bind_to_any_port(options_.host);
    check(port > 0, "serve: cannot listen on ", options_.host, ": not an address of this machine");
    return port;
  }
  check(server_->bind_to_port(options_.host, options_.port), "serve: cannot listen on ", options_.host, ":",
        options_.port, ": the port is in use, or the host is not an address of this machine");
  return options_.port;
}

void HttpServer::listen() {
  // Debian's compiled httplib listens with a backlog of 5: 32 clients connecting at once overflow it and
  // wait a second for their SYN to be sent again. Listening again sets a longer queue (the kernel caps it).
  ::listen(listening_socket_, kListenBacklog);
  server_->listen_after_bind();
}

void HttpServer::stop() { server_->stop(); }

bool HttpServer::authorised(const std::string& authorization_header) const {
  static constexpr std::string_view kBearer = "Bearer ";
  if (authorization_header.size() < kBearer.size() ||
      !std::equal(kBearer.begin(), kBearer.end(), authorization_header.begin(),
                  [](unsigned char a, unsigned char b) { return std::tolower(a) == std::tolower(b); }))
    return false;
  return same_key(std::string_view(authorization_header).substr(kBearer.size()), options_.api_key);
}

void HttpServer::add_routes() {
  httplib::Server& server = *server_;
  // httplib bounds a body by its Content-Length only: a chunked one could be of any
  // size, so it is refused before it is read. (What follows on the connection is
  // then read as requests, which fail: httplib bounds the length of a request line.)
  server.set_pre_routing_handler([](const httplib::Request& request, httplib::Response& response) {
    if (request.get_header_value("Transfer-Encoding").find("chunked") == std::string::npos)
      return httplib::Server::HandlerResponse::Unhandled;
    send_error(response, ApiError(411, "a request body must come with its Content-Length, not chunked"));
    return httplib::Server::HandlerResponse::Handled;
  });
  // Called for every status from 400 on, ours included: those have their body already.
  server.set_error_handler(httplib::Server::HandlerWithResponse(
      [this](const httplib::Request& request, httplib::Response& response) {
        if (!response.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        explain_status(request, response, options_.max_body_bytes);
        return httplib::Server::HandlerResponse::Handled;
      }));
  // A bug of ours, not the client's: said as one.
  server.set_exception_handler([](const httplib::Request&, httplib::Response& response, std::exception_ptr thrown) {
    std::string message = "internal error";
    try {
      std::rethrow_exception(thrown);
    } catch (const std::exception& error) {
      message += std::string(": ") + error.what();
    } catch (...) {
    }
    send_error(response, ApiError(500, message, "", "", "server_error"));
  });

  server.Get("/health", [this](const httplib::Request&, httplib::Response& response) {
    const EngineStats stats = engine_.stats();
    const nlohmann::json health = {{"status", "ok"}, {"model", model_.id}, {"active", stats.active},
                                   {"queued", stats.queued}, {"completed", stats.completed}};
    response.set_content(dump_json(health), kJson);
  });
  // The API key is checked once the body is read, so that a refused request
  // leaves its connection ready for the next (kept alive by OpenAI's clients).
  const auto with_key = [this](httplib::Server::Handler handler) {
    return [this, handler](const httplib::Request& request, httplib::Response& response) {
      if (options_.api_key.empty() || authorised(request.get_header_value("Authorization")))
        return handler(request, response);
      send_error(response, ApiError(401, "a valid API key is needed: send the header Authorization: Bearer KEY", "",
                                    "invalid_api_key", "authentication_error"));
    };
  };
  server.Get("/v1/models", with_key([this](const httplib::Request&, httplib::Response& response) {
               response.set_content(dump_json(models_list(model_.id, started_)), kJson);
             }));
  server.Get("/v1/models/(.+)", with_key([this](const httplib::Request& request, httplib::Response& response) {
               if (request.matches[1] != model_.id)
                 return send_error(response, ApiError(404, "the model '" + request.matches[1].str() +
                                                               "' does not exist; this server has '" + model_.id + "'",
                                                      "model", "model_not_found"));
               response.set_content(dump_json(models_list(model_.id, started_)["data"][0]), kJson);
             }));
  server.Get("/", [](const httplib::Request&, httplib::Response& response) {
    const std::string_view page = chat_page_html();
    response.set_content(page.data(), page.size(), "text/html; charset=utf-8");
  });
  server.Get("/explain", [](const httplib::Request&, httplib::Response& response) {
    const std::string_view page = explain_page_html();
    response.set_content(page.data(), page.size(), "text/html; charset=utf-8");
  });
  server.Post("/v1/explain", with_key([this](const httplib::Request& request, httplib::Response& response) {
                try {
                  explain(request, response);
                } catch (const ApiError& error) {
                  send_error(response, error);
                }
              }));
  const auto complete = [this](Endpoint endpoint) {
    return [this, endpoint](const httplib::Request& request, httplib::Response& response) {
      try {
        answer(endpoint, request, response);
      } catch (const ApiError& error) {
        send_error(response, error);
      }
    };
  };
  server.Post("/v1/completions", with_key(complete(Endpoint::Completions)));
  server.Post("/v1/chat/completions", with_key(complete(Endpoint::ChatCompletions)));
}

void HttpServer::answer(Endpoint endpoint, const httplib::Request& http_request, httplib::Response& response) {
  ApiRequest request = parse_request(endpoint, http_request.body, model_);
  request.completion.deadline = Clock::now() + options_.request_timeout;
  std::shared_ptr<TokenStream> stream;
  try {
    stream = engine_.submit(request.completion);
  } catch (const EngineBusy& busy) {
    response.set_header("Retry-After", "1");
    throw ApiError(503, busy.what(), "", "", "server_error");
  } catch (const Error& refused) {  // parse_request checked all but the KV memory the request needs
    throw ApiError(400, refused.what(), "max_tokens");
  }
  const AnswerHeader header = new_answer_header(endpoint, model_.id);
  const tokenizer::TextTokenizer& tokenizer = *model_.tokenizer;
  if (!request.stream) {
    try {
      response.set_content(dump_json(whole_answer_of(request, *stream, tokenizer, header)), kJson);
    } catch (...) {
      stream->cancel();
      throw;
    }
    return;
  }
  response.set_header("Cache-Control", "no-cache");
  response.set_chunked_content_provider(
      "text/event-stream",
      [request = std::move(request), stream, &tokenizer, header, this](size_t, httplib::DataSink& sink) {
        const StreamEnd end = stream_answer(request, *stream, tokenizer, header, sink);
        if (end == StreamEnd::ClientGone)
          std::cerr << "serve: a client stopped taking its stream (gone, or no data taken for "
                    << options_.io_timeout.count() << " s): its reply was cancelled\n";
        return end == StreamEnd::Complete;
      },
      // Also when the answer never started (the connection was already gone): the engine drops the sequence.
      [stream](bool success) {
        if (!success) stream->cancel();
      });
}

void HttpServer::explain(const httplib::Request& http_request, httplib::Response& response) {
  const ExplainRequest request = parse_explain_request(http_request.body, model_, engine_.config());
  std::string answer;
  try {
    engine_.run_on_model([&](GPT& model) { answer = explain_answer(model, model_, request, options_.max_explain_values); });
  } catch (const EngineBusy& busy) {
    response.set_header("Retry-After", "1");
    throw ApiError(503, busy.what(), "", "", "server_error");
  }
  // Written out, the charset keeps httplib from compressing the answer: it picks brotli at its
  // slowest setting for a browser, 200 ms for a 116 KB answer that took 3 ms to compute.
  response.set_content(answer, "application/json; charset=utf-8");
}

}  // namespace tg::serve
