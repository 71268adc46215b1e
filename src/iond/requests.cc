#include "iond/requests.h"

#include <memory>

namespace stagio {
namespace iond {
namespace {

using net::MessageType;

// Runs `operation` on the handle's file, or fails for an unknown handle.
template <typename Operation>
Status WithHandle(RequestContext& context, uint64_t number, Operation operation) {
  Handle handle;
  Status status = context.session->Find(number, &handle);
  return status.ok() ? operation(handle) : status;
}

uint64_t ReplyMemory(const net::ReadRequest& request) {
  return std::min<uint64_t>(request.length, net::kMaxDataPerRequest);
}
template <typename Request>
uint64_t ReplyMemory(const Request&) {
  return 0;
}

template <MessageType kType>
Status Prepare(const net::Frame& frame, PreparedRequest* prepared, uint64_t* memory) {
  using Request = typename net::MessageTypes<kType>::Request;
  using Reply = typename net::MessageTypes<kType>::Reply;
  auto request = std::make_shared<Request>();
  Status status = net::DecodePayload(frame.payload, request.get(),
                                     net::MessageName(static_cast<uint16_t>(kType)));
  if (!status.ok()) return status;
  *memory = ReplyMemory(*request);
  *prepared = [request](RequestContext& context) {
    context.stats->CountRequest(kType);
    Reply reply;
    Serve<kType>(context, *request, &reply);
    return net::EncodePayload(reply);
  };
  return Status::OK();
}

}  // namespace

// The Hello gate answers the first Hello (hello_gate.h); one sent later changes nothing.
template <>
void Serve<MessageType::kHello>(RequestContext&, const net::HelloRequest&,
                                net::HelloReply* reply) {
  reply->status = net::ToWire(Status::InvalidArgument("Hello sent twice on one connection"));
}

template <>
void Serve<MessageType::kOpen>(RequestContext& context, const net::OpenRequest& request,
                               net::OpenReply* reply) {
  const auto access = static_cast<net::FileAccess>(request.access);
  if (access != net::FileAccess::kReadOnly && access != net::FileAccess::kWriteOnly &&
      access != net::FileAccess::kReadWrite) {
    reply->status = net::ToWire(Status::InvalidArgument(
        "Open of " + request.path + ": unknown access mode " + std::to_string(request.access)));
    return;
  }
  Handle handle;
  handle.may_write = access != net::FileAccess::kReadOnly;
  Status status = context.files->Open(request.path, handle.may_write, &handle.file);
  if (status.ok()) {
    reply->handle = context.session->Add(std::move(handle));
  } else {
    // The client falls back to direct storage, and a path outside the root may be a probe:
    // either way the operator should see it.
    (*context.log)("refused to open " + request.path + " for " + *context.client + ": " +
                   status.message());
  }
  reply->status = net::ToWire(status);
}

template <>
void Serve<MessageType::kClose>(RequestContext& context, const net::FileRequest& request,
                                net::StatusReply* reply) {
  Handle handle;
  // Only the request that takes the handle out closes it, however many Closes race.
  Status status = context.session->Remove(request.handle, &handle);
  if (status.ok()) status = context.files->Close(handle.file);
  reply->status = net::ToWire(status);
}

template <>
void Serve<MessageType::kReadBlocks>(RequestContext& context, const net::ReadRequest& request,
                                     net::ReadReply* reply) {
  reply->status = net::ToWire(WithHandle(context, request.handle, [&](Handle& handle) {
    const ClientLayout layout{request.client_block_size, request.client_aggregators};
    Status status = context.files->Read(*handle.file, request.offset, request.length, layout,
                                        /*prefetch_after=*/request.pieces_after == 0,
                                        &reply->data);
    context.stats->AddBytesRead(reply->data.size());
    return status;
  }));
}

template <>
void Serve<MessageType::kWriteBlocks>(RequestContext& context, const net::WriteRequest& request,
                                      net::StatusReply* reply) {
  reply->status = net::ToWire(WithHandle(context, request.handle, [&](Handle& handle) {
    if (!handle.may_write) {
      return Status::InvalidArgument("handle " + std::to_string(request.handle) + " of " +
                                     handle.file->path() + " was opened read-only");
    }
    Status status = context.files->Write(*handle.file, request.offset, request.data);
    if (status.ok()) context.stats->AddBytesWritten(request.data.size());
    return status;
  }));
}

template <>
void Serve<MessageType::kFlush>(RequestContext& context, const net::FileRequest& request,
                                net::StatusReply* reply) {
  reply->status = net::ToWire(WithHandle(
      context, request.handle, [&](Handle& handle) { return context.files->Flush(*handle.file); }));
}

template <>
void Serve<MessageType::kSync>(RequestContext& context, const net::FileRequest& request,
                               net::StatusReply* reply) {
  reply->status = net::ToWire(WithHandle(
      context, request.handle, [&](Handle& handle) { return context.files->Sync(*handle.file); }));
}

template <>
void Serve<MessageType::kStat>(RequestContext& context, const net::FileRequest& request,
                               net::StatReply* reply) {
  reply->status = net::ToWire(WithHandle(context, request.handle, [&](Handle& handle) {
    return context.files->Stat(*handle.file, &reply->size);
  }));
}

template <>
void Serve<MessageType::kInvalidate>(RequestContext& context, const net::FileRequest& request,
                                     net::StatusReply* reply) {
  reply->status = net::ToWire(WithHandle(context, request.handle, [&](Handle& handle) {
    return context.files->Invalidate(*handle.file);
  }));
}

Status PrepareRequest(const net::Frame& frame, PreparedRequest* prepared, uint64_t* memory) {
  switch (frame.type) {
#define STAGIO_PREPARE(name, code, request, reply) \
  case MessageType::k##name:                       \
    return Prepare<MessageType::k##name>(frame, prepared, memory);
    STAGIO_IOND_MESSAGES(STAGIO_PREPARE)
#undef STAGIO_PREPARE
  }
  return Status::InvalidArgument("unknown message type " +
                                 std::to_string(static_cast<uint16_t>(frame.type)));
}

}  // namespace iond
}  // namespace stagio
