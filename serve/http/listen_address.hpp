// serve/http/listen_address.hpp — why the endpoint could not listen on HOST:PORT, in words a user can act on.
// httplib's bind only says that it failed; this probes the address again to find out why.
#pragma once

#include <string>

namespace corun::serve::http {

/// "127.0.0.1:8000 is in use (Address already in use): stop what listens there or pick another --port (--port 0
/// picks a free one)", or the host cannot be resolved, is not this machine's, or the port needs privileges.
std::string bind_failure(const std::string& host, int port);

}  // namespace corun::serve::http
