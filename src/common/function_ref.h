// FunctionRef: a non-owning reference to a callable, for passing "the PMPI call this wrapper
// stands for" down to the engine without allocating on every MPI call.
#pragma once

#include <type_traits>
#include <utility>

namespace stagio {

template <typename Signature>
class FunctionRef;

template <typename Result, typename... Args>
class FunctionRef<Result(Args...)> {
 public:
  template <typename Callable,
            typename = std::enable_if_t<!std::is_same_v<std::decay_t<Callable>, FunctionRef>>>
  FunctionRef(Callable&& callable)  // NOLINT: implicit by design, like std::function
      : object_(const_cast<void*>(static_cast<const void*>(&callable))),
        invoke_([](void* object, Args... args) -> Result {
          return (*static_cast<std::remove_reference_t<Callable>*>(object))(
              std::forward<Args>(args)...);
        }) {}

  Result operator()(Args... args) const { return invoke_(object_, std::forward<Args>(args)...); }

 private:
  void* object_;
  Result (*invoke_)(void*, Args...);
};

}  // namespace stagio
