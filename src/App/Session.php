<?php

declare(strict_types=1);

namespace Kiln\App;

use Kiln\Store\Session\SessionCodec;
use Kiln\Store\Session\SessionStore;

/**
 * The session of one request, for route handlers (a `Session $session` parameter) once the Sessions
 * middleware runs (App::sessions()). Lazy: nothing is read until a method needs the data, and a request that
 * never touches it costs nothing and sets no cookie. Strict: a cookie naming no stored session gets a new
 * id, never the one the client chose. Values are any serializable PHP value, stored as classic scripts'
 * $_SESSION stores them, so both see the same keys.
 *
 * Writes reach the store when the response leaves (Sessions), merged key by key with concurrent requests
 * of the same session (SessionStore::commit()). A handler that throws leaves the session as it was.
 */
final class Session
{
    private const FLASH = '_flash';

    private SessionState $state = SessionState::Unread;

    private string $id = '';

    private bool $fresh = false;

    private ?string $replaced = null;

    /** @var array<string, string> name => serialized value, as read plus this request's changes */
    private array $parts = [];

    /** @var array<string, true> */
    private array $changed = [];

    /** @var array<string, true> */
    private array $removed = [];

    /** @var array<string, mixed> flashed by the previous request */
    private array $flashed = [];

    /** @var array<string, mixed> flashed by this one */
    private array $flashing = [];

    public function __construct(private readonly SessionStore $store, private readonly ?string $cookieId) {}

    public function id(): string
    {
        $this->open();
        return $this->id;
    }

    public function get(string $key, mixed $default = null): mixed
    {
        $this->open();
        return isset($this->parts[$key]) ? SessionCodec::value($this->parts[$key]) : $default;
    }

    public function has(string $key): bool
    {
        $this->open();
        return isset($this->parts[$key]);
    }

    public function set(string $key, mixed $value): void
    {
        $this->open();
        $this->parts[SessionCodec::name($key)] = serialize($value);
        $this->changed[$key] = true;
        unset($this->removed[$key]);
    }

    public function remove(string $key): void
    {
        $this->open();
        unset($this->parts[$key], $this->changed[$key]);
        $this->removed[$key] = true;
    }

    /** @return array<string, mixed> every value but the flash bag */
    public function all(): array
    {
        $this->open();
        return array_map(SessionCodec::value(...), array_diff_key($this->parts, [self::FLASH => true]));
    }

    /** Keeps a value for the next request of this session only (a message after a redirect). */
    public function flash(string $key, mixed $value): void
    {
        $this->open();
        $this->flashing[$key] = $value;
        $this->parts[self::FLASH] = serialize($this->flashing);
        $this->changed[self::FLASH] = true;
        unset($this->removed[self::FLASH]);
    }

    /** What the previous request flashed under $key. */
    public function flashed(string $key, mixed $default = null): mixed
    {
        $this->open();
        return \array_key_exists($key, $this->flashed) ? $this->flashed[$key] : $default;
    }

    /** A new id for the same data (call it at login): the old id stops working. */
    public function regenerate(): void
    {
        $this->open();
        if (!$this->fresh) {
            $this->replaced ??= $this->id;
        }
        $this->id = SessionStore::newId();
        $this->fresh = true;
        $this->changed = array_fill_keys(array_keys($this->parts), true);
    }

    /** Ends the session (call it at logout): its data is removed and the cookie dropped. */
    public function destroy(): void
    {
        $this->open();
        $this->state = SessionState::Destroyed;
    }

    public function state(): SessionState
    {
        return $this->state;
    }

    /**
     * Writes what this request changed. Returns the id the cookie must now carry, '' when the cookie must be
     * dropped, or null when it stays as it is.
     *
     * @internal called by the Sessions middleware when the response leaves
     */
    public function commit(): ?string
    {
        if ($this->state === SessionState::Unread) {
            return null;
        }
        if ($this->state === SessionState::Destroyed) {
            $this->replaced === null || $this->store->destroy($this->replaced);
            $this->fresh || $this->store->destroy($this->id);
            return $this->cookieId === null ? null : '';
        }
        if ($this->replaced !== null) {
            $this->store->destroy($this->replaced);
        }
        if ($this->fresh && $this->changed === []) {
            return null; // a new session nothing was written to is not kept
        }
        $this->store->commit($this->id, array_intersect_key($this->parts, $this->changed), array_keys($this->removed));
        return $this->fresh ? $this->id : null;
    }

    private function open(): void
    {
        if ($this->state === SessionState::Destroyed) {
            throw new \Error('This session was destroyed: start over on the next request');
        }
        if ($this->state === SessionState::Open) {
            return;
        }
        $this->state = SessionState::Open;
        $data = $this->cookieId !== null && SessionStore::wellFormed($this->cookieId) ? $this->store->read($this->cookieId) : null;
        if ($data === null || $this->cookieId === null) {
            [$this->id, $this->fresh] = [SessionStore::newId(), true];
            return;
        }
        $this->id = $this->cookieId;
        $this->parts = SessionStore::parts($data);
        if (isset($this->parts[self::FLASH])) {
            $flashed = SessionCodec::value($this->parts[self::FLASH]);
            /** @var array<string, mixed> $flashed */
            $this->flashed = \is_array($flashed) ? $flashed : [];
            unset($this->parts[self::FLASH]);
            $this->removed[self::FLASH] = true;
        }
    }
}
