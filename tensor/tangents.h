/// @file
/// The tangents of forward mode, kept for autograd/forward.h beside the
/// storages. The tensor layer only holds the table (a Storage forgets its
/// entry when it is freed, through tensor/storage.h's storage_freed_hook);
/// what a tangent means, and every rule that makes
/// one, is autograd's.
#pragma once

#include <cstddef>
#include <memory>

#include "tensor/storage.h"

namespace ember {

/// Forward mode (autograd/forward.h): the tangent of a storage's bytes, a
/// storage of the same size. A tangent belongs to memory, not to one handle,
/// so every view of a storage has the same view of its tangent. They are kept
/// beside the storages, in a table, so that a Storage is no bigger for them;
/// a storage that is freed leaves the table (its address may be reused).
namespace tangents {
/// How many storages have a tangent now (the freeing storage looks itself
/// up only when this is not 0).
extern size_t count;
/// The tangent of s, or null.
std::shared_ptr<Storage> of(const Storage* s);
void attach(const Storage* s, std::shared_ptr<Storage> tangent);
/// s leaves the table (a storage being freed, through storage_freed_hook).
void forget(const Storage* s);
/// Drops every tangent (when the dual level closes).
void clear();
}  // namespace tangents

}  // namespace ember
