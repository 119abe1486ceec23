// Shared by the store ops: the StoreHandler held by an input blob (what *StoreHandlerCreate made).
#pragma once

#include <chrono>
#include <string>

#include "core/operator.h"
#include "device/collectives/store_handler.h"

namespace hetnet {

inline StoreHandler& StoreHandlerInput(const OperatorBase& op, int i) {
  const Blob* b = op.InputBlob(i);
  HN_ENFORCE(b->IsType<StoreHandlerPtr>() && b->Get<StoreHandlerPtr>(), op.type(), ": input ", i, " ('",
             op.def().input(i), "') must hold a store handler (made by FileStoreHandlerCreate, ",
             "TCPStoreHandlerCreate or RedisStoreHandlerCreate), but it holds ", b->TypeName());
  return *b->Get<StoreHandlerPtr>();
}

// Publishes a new store handler in output blob i.
inline void SetStoreHandlerOutput(OperatorBase* op, int i, StoreHandlerPtr handler) {
  op->OutputBlob(i)->Reset(std::make_shared<StoreHandlerPtr>(std::move(handler)));
}

// Arg `timeout_ms` (0 = no timeout), StoreHandler::kDefaultTimeout (30 s) when absent.
inline std::chrono::milliseconds StoreTimeoutArgument(const OperatorBase& op) {
  const int64_t ms =
      op.GetSingleArgument<int64_t>("timeout_ms", static_cast<int64_t>(StoreHandler::kDefaultTimeout.count()));
  HN_ENFORCE(ms >= 0, op.type(), ": timeout_ms must be >= 0 (0: wait forever), got ", ms);
  return std::chrono::milliseconds(ms);
}

}  // namespace hetnet
