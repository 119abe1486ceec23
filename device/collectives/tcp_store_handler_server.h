// The TCP store's server: one thread, one poll(2) loop over the listening socket and the clients
// (tcp_store_handler_protocol.h). Waits (GET of a missing key, WAIT) are parked on the connection
// and answered when a SET/ADD completes them or their deadline passes. Hostile bytes cost the
// sender its connection, never the server: frames are size-checked, requests fully parsed.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include <sys/types.h>

namespace hetnet {

class TCPStoreServer {
 public:
  // Listens on host:port (host "" or "0.0.0.0"/"::" = every interface; port 0 = a free port).
  // Throws kIo when it cannot listen.
  TCPStoreServer(const std::string& host, int port);
  // Stops the thread and closes every connection. In a child forked from the serving process it
  // closes only the child's copies of the listening socket and pipe, and leaves the copied state
  // alone: the thread, and the state as it left it at the fork, belong to the parent.
  ~TCPStoreServer();
  TCPStoreServer(const TCPStoreServer&) = delete;
  TCPStoreServer& operator=(const TCPStoreServer&) = delete;

  int port() const { return port_; }

 private:
  struct Client;
  void Loop();
  void Accept();
  // Reads what is available; false when the connection must close.
  bool ReadFrom(Client* c);
  bool ProcessFrames(Client* c);  // handles buffered complete frames; false: close the connection
  bool WriteTo(Client* c);
  void Handle(Client* c, const std::string& payload);
  void Reply(Client* c, const std::string& frame);
  // Answers every parked wait whose keys are now all set, or whose deadline passed.
  void ServeWaits(bool only_expired);
  bool AllSet(const Client& c) const;

  int listen_fd_ = -1;
  int wake_fds_[2] = {-1, -1};  // a pipe: the destructor writes, the loop wakes up and exits
  int port_ = 0;
  std::map<std::string, std::string> data_;
  std::map<int, std::unique_ptr<Client>> clients_;  // by fd
  pid_t owner_pid_;
  std::unique_ptr<std::thread> thread_;
};

}  // namespace hetnet
