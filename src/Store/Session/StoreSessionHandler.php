<?php

declare(strict_types=1);

namespace Kiln\Store\Session;

/**
 * PHP's native sessions (session_start() in a classic script of the sequential tier) over a SessionStore,
 * so they are the App routes' sessions. write() sends only the keys the script changed since read() (the
 * same per-key merge as App routes), validateId() answers strict mode (an unknown id is replaced), and
 * lazy_write's updateTimestamp() renews the TTL. Expiry is the Store's TTL: gc() has nothing to do.
 */
final class StoreSessionHandler implements \SessionHandlerInterface, \SessionUpdateTimestampHandlerInterface
{
    /** @var array<string, array<string, string>> the parts read(), by session id */
    private array $read = [];

    public function __construct(private readonly SessionStore $sessions) {}

    public function open(string $path, string $name): bool
    {
        return true;
    }

    public function close(): bool
    {
        $this->read = [];
        return true;
    }

    public function read(string $id): string
    {
        $data = $this->sessions->read($id) ?? '';
        $this->read[$id] = SessionStore::parts($data);
        return $data;
    }

    public function write(string $id, string $data): bool
    {
        $before = $this->read[$id] ?? [];
        $after = SessionStore::parts($data);
        $changed = array_diff_assoc($after, $before);
        $this->sessions->commit($id, $changed, array_keys(array_diff_key($before, $after)));
        $this->read[$id] = $after;
        return true;
    }

    public function destroy(string $id): bool
    {
        $this->sessions->destroy($id);
        unset($this->read[$id]);
        return true;
    }

    public function gc(int $max_lifetime): int
    {
        return 0;
    }

    public function validateId(string $id): bool
    {
        return SessionStore::wellFormed($id) && $this->sessions->exists($id);
    }

    public function updateTimestamp(string $id, string $data): bool
    {
        return $this->write($id, $data);
    }
}
