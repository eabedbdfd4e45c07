<?php

declare(strict_types=1);

namespace Kiln\Site\Htaccess;

/**
 * Everything but rewriting that .htaccess files set for one request, merged top-down as Apache merges
 * directory configs: a deeper file's access rules replace the parent's, headers append, maps (types,
 * error documents, php ini, env, expiry by type) merge key by key, single values are overridden.
 * ConfigBuilder fills one per file and per files section; after that it is only read and merged.
 */
final class Settings
{
    public ?AccessCompat $accessCompat = null;

    public ?Requirement $require = null;

    /** @var list<HeaderAction> */
    public array $headers = [];

    public ?bool $expiresActive = null;

    /** @var array<string, Expiry> lower-case MIME type (or `type/*`) => rule */
    public array $expiresByType = [];

    public ?Expiry $expiresDefault = null;

    /** @var array<string, string> lower-case extension without the dot => MIME type */
    public array $types = [];

    /** `AddDefaultCharset`: '' when Off. */
    public ?string $defaultCharset = null;

    /** @var array<int, string> status => `/local/path`, `http…` URL, or text; '' restores Kiln's own */
    public array $errorDocuments = [];

    /** @var ?list<string> `DirectoryIndex` names; [] for `disabled` */
    public ?array $directoryIndex = null;

    /** `Options ±Indexes`; Kiln never lists a directory, so only `false` is honoured. */
    public ?bool $indexes = null;

    /** @var array<string, string> php ini name => value */
    public array $phpIni = [];

    /** `php_flag engine`: false turns PHP off for the scripts it applies to. */
    public ?bool $phpEngine = null;

    /** `SetHandler`: the handler for every file it applies to; '' for `None` (the extension decides again). */
    public ?string $handler = null;

    /** @var list<string> `RemoveHandler` extensions, lower case without the dot */
    public array $removedHandlers = [];

    /** @var array<string, string> `SetEnv` name => value */
    public array $env = [];

    /** @var list<string> `UnsetEnv` names */
    public array $unsetEnv = [];

    public function merge(self $child): self
    {
        $merged = clone $this;
        $merged->accessCompat = $child->accessCompat ?? $this->accessCompat;
        $merged->require = $child->require ?? $this->require;
        $merged->headers = [...$this->headers, ...$child->headers];
        $merged->expiresActive = $child->expiresActive ?? $this->expiresActive;
        $merged->expiresByType = array_merge($this->expiresByType, $child->expiresByType);
        $merged->expiresDefault = $child->expiresDefault ?? $this->expiresDefault;
        $merged->types = array_merge($this->types, $child->types);
        $merged->defaultCharset = $child->defaultCharset ?? $this->defaultCharset;
        $merged->errorDocuments = array_replace($this->errorDocuments, $child->errorDocuments);
        $merged->directoryIndex = $child->directoryIndex ?? $this->directoryIndex;
        $merged->indexes = $child->indexes ?? $this->indexes;
        $merged->phpIni = array_merge($this->phpIni, $child->phpIni);
        $merged->phpEngine = $child->phpEngine ?? $this->phpEngine;
        $merged->handler = $child->handler ?? $this->handler;
        $merged->removedHandlers = [...$this->removedHandlers, ...$child->removedHandlers];
        $merged->env = array_diff_key(array_merge($this->env, $child->env), array_flip($child->unsetEnv));
        $merged->unsetEnv = [...$this->unsetEnv, ...$child->unsetEnv];
        return $merged;
    }

    /** @param array<string, string> $env variables set so far (SetEnv, E=), for `Require env` and `Allow from env=` */
    public function allows(string $ip, string $method, array $env): bool
    {
        if ($this->accessCompat !== null && !$this->accessCompat->allows($ip, $method, $env)) {
            return false;
        }
        return $this->require === null || $this->require->grants($ip, $method, $env);
    }

    /**
     * Whether PHP may run this script, or why not: `php_flag engine off`, a `SetHandler` that is not PHP's, or
     * `RemoveHandler` of its extension take it away, as they do from mod_php.
     */
    public function scriptRefusal(string $fileName): ?string
    {
        if ($this->phpEngine === false) {
            return 'php_flag engine off';
        }
        if ($this->handler !== null && $this->handler !== '' && !self::isPhpHandler($this->handler)) {
            return "SetHandler {$this->handler}";
        }
        $dot = strrpos($fileName, '.');
        if ($dot !== false && \in_array(strtolower(substr($fileName, $dot + 1)), $this->removedHandlers, true)) {
            return 'RemoveHandler ' . substr($fileName, $dot);
        }
        return null;
    }

    /** mod_php's handler names and a FastCGI proxy (php-fpm behind mod_proxy_fcgi). */
    private static function isPhpHandler(string $handler): bool
    {
        return preg_match('~^(application/x-httpd-(ea-)?php|php[0-9.]*-script|proxy:(fcgi|unix):)~i', $handler) === 1;
    }

    /** The `ErrorDocument` for a status: a local URL path, an absolute URL (redirect) or text; null: Kiln's own. */
    /**
     * Whether an `ErrorDocument` line for the status applies, `default` included: the site expects that
     * status to happen (a `404` one turns off the implicit front controller, DocumentRoot).
     */
    public function declaresErrorDocument(int $status): bool
    {
        return isset($this->errorDocuments[$status]);
    }

    public function errorDocument(int $status): ?string
    {
        $document = $this->errorDocuments[$status] ?? '';
        return $document === '' ? null : $document;
    }

    /**
     * @param array<string, string> $env
     * @return list<HeaderAction> the `Header` actions to apply, in order; $always: the response is an error Kiln made
     */
    public function headerActions(bool $kilnError, array $env = []): array
    {
        return array_values(array_filter($this->headers, static fn(HeaderAction $a): bool => ($a->always || !$kilnError) && $a->appliesWith($env)));
    }

    /** `AddType` for a file name (its last extension, any case), null: Kiln's MIME map. */
    public function contentTypeFor(string $fileName): ?string
    {
        $dot = strrpos($fileName, '.');
        return $dot === false ? null : ($this->types[strtolower(substr($fileName, $dot + 1))] ?? null);
    }

    /** `AddDefaultCharset`: the charset to add to a text/plain or text/html type that has none, else null. */
    public function charsetFor(string $contentType): ?string
    {
        if ($this->defaultCharset === null || $this->defaultCharset === '' || stripos($contentType, 'charset=') !== false) {
            return null;
        }
        return self::takesDefaultCharset(self::mediaType($contentType)) ? $this->defaultCharset : null;
    }

    /**
     * A static file's type without the charset Kiln gives text types (`utf-8`, MimeTypes) when `AddDefaultCharset`
     * (`Off` included) covers it, else null. Apache adds no charset of its own to a static file, so for text/plain
     * and text/html the directive alone decides: charsetFor() then adds its charset, and `Off` leaves none.
     */
    public function staticTypeFor(string $contentType): ?string
    {
        if ($this->defaultCharset === null) {
            return null;
        }
        $type = self::mediaType($contentType);
        return self::takesDefaultCharset($type) ? $type : null;
    }

    private static function mediaType(string $contentType): string
    {
        return strtolower(trim(explode(';', $contentType)[0]));
    }

    /** Apache's AddDefaultCharset reaches these two types only. */
    private static function takesDefaultCharset(string $mediaType): bool
    {
        return $mediaType === 'text/plain' || $mediaType === 'text/html';
    }

    /** mod_expires: when a response of this type expires (unix time), null when no rule applies. */
    public function expiresAt(string $contentType, int $now, ?int $modified): ?int
    {
        if ($this->expiresActive !== true) {
            return null;
        }
        $type = strtolower(trim(explode(';', $contentType)[0]));
        $rule = $this->expiresByType[$type] ?? $this->expiresByType[explode('/', $type)[0] . '/*'] ?? $this->expiresDefault;
        return $rule?->at($now, $modified);
    }
}
