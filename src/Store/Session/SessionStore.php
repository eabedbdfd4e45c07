<?php

declare(strict_types=1);

namespace Kiln\Store\Session;

use Kiln\Store\Store;
use Kiln\Store\StoreException;

/**
 * Sessions in a Store, as php-redis's session handler keeps them: the key `PHPREDIS_SESSION:<id>`, the data
 * in PHP's `php` serializer format (SessionCodec), the TTL session.gc_maxlifetime's 1,440 s unless told.
 * So App routes (Kiln\App\Session), classic scripts of the sequential tier (StoreSessionHandler) and, on a
 * shared Redis, php-fpm with `session.save_handler=redis` read and write the same sessions.
 *
 * Writes merge key by key: commit() applies the keys a request set or removed to the newest stored data and
 * writes it with compareAndSet(), retrying when another request of the same session wrote in between. Two
 * concurrent requests that write different keys keep both; the same key, the last to commit.
 */
final class SessionStore
{
    public const PREFIX = 'PHPREDIS_SESSION:';

    private const ATTEMPTS = 64;

    public function __construct(private readonly Store $store, public readonly int $ttl = 1440)
    {
        if ($ttl < 1) {
            throw new \ValueError('A session TTL is at least 1 second');
        }
    }

    /** 32 hex digits (128 random bits), what PHP's defaults make. */
    public static function newId(): string
    {
        return bin2hex(random_bytes(16));
    }

    /** Whether $id has the shape of a session id (PHP's alphabet, 22 to 128 characters). */
    public static function wellFormed(string $id): bool
    {
        return preg_match('/^[A-Za-z0-9,-]{22,128}$/D', $id) === 1;
    }

    /** The session's data in the php format, or null when there is no such session. */
    public function read(string $id): ?string
    {
        $data = $this->store->get(self::PREFIX . $id);
        return \is_string($data) ? $data : null;
    }

    public function exists(string $id): bool
    {
        return $this->read($id) !== null;
    }

    /**
     * Writes the keys this request changed over the stored session (creating it if absent) and renews its TTL.
     *
     * @param array<string, string> $changed name => serialized value
     * @param list<string> $removed
     * @throws StoreException when other writers kept winning (64 attempts)
     */
    public function commit(string $id, array $changed, array $removed): void
    {
        $key = self::PREFIX . $id;
        for ($attempt = 0; $attempt < self::ATTEMPTS; $attempt++) {
            $current = $this->store->get($key);
            $current = \is_string($current) ? $current : null;
            $parts = array_diff_key(array_replace(self::parts($current), $changed), array_flip($removed));
            $data = SessionCodec::join($parts);
            if ($this->store->compareAndSet($key, $current, $data, $this->ttl)) {
                return;
            }
        }
        throw new StoreException("Session $id: other requests kept writing it; this request's changes were not saved");
    }

    public function destroy(string $id): void
    {
        $this->store->delete(self::PREFIX . $id);
    }

    /** @return array<string, string> the stored parts; data that is not in the php format counts as empty */
    public static function parts(?string $data): array
    {
        if ($data === null || $data === '') {
            return [];
        }
        try {
            return SessionCodec::split($data);
        } catch (StoreException) {
            return [];
        }
    }
}
