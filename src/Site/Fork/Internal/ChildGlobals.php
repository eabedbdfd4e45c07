<?php

declare(strict_types=1);

namespace Kiln\Site\Fork\Internal;

use Kiln\Http\BadRequestBodyException;
use Kiln\Http\Body\BodyLimits;
use Kiln\Http\Body\FormNames;
use Kiln\Http\Cookie;
use Kiln\Http\Multipart\MultipartParser;
use Kiln\Http\UploadedFile;
use Kiln\Site\Sequential\Engine\InputBody;
use Kiln\Site\Sequential\Engine\SapiGlobals;
use Kiln\Site\Sequential\Engine\UploadTable;
use Kiln\Site\Sequential\ScriptEnvironment;

/**
 * @internal In a forked child: the superglobals a web SAPI would have built from the CGI meta-variables
 * and the body ($_SERVER, $_GET, $_POST, $_COOKIE, $_FILES, $_REQUEST with request_order "GP"), and
 * php://input, which holds the body as under a web SAPI: for every method and type but a multipart POST
 * (that one became $_POST and $_FILES).
 */
final class ChildGlobals
{
    /** @var list<string> temporary upload files, removed at the end unless moved */
    public array $uploads = [];

    /** @param InputBody|null $input php://input's stream, probed in the fork server (null: it reads empty) */
    public function __construct(private readonly ?InputBody $input = null) {}

    /**
     * @param array<string, string> $params
     * @param resource $body
     */
    public function install(array $params, mixed $body): void
    {
        $now = \microtime(true);
        $server = $params;
        $server['PHP_SELF'] = ($params['SCRIPT_NAME'] ?? '') . ($params['PATH_INFO'] ?? '');
        $server['REQUEST_TIME_FLOAT'] = $now;
        $server['REQUEST_TIME'] = (int) $now;
        $_SERVER = $server;
        $_ENV = [];
        (new ScriptEnvironment())->apply($params); // getenv() sees the request's variables, as under a web SAPI
        \parse_str($params['QUERY_STRING'] ?? '', $get);
        $_GET = $get;
        $cookies = [];
        foreach (Cookie::parseHeader(isset($params['HTTP_COOKIE']) ? [$params['HTTP_COOKIE']] : []) as $name => $value) {
            // $_COOKIE mangles names as parse_str() does ("a.b" → "a_b", "a[x]" → nested).
            \parse_str(\rawurlencode($name) . '=' . \rawurlencode($value), $one);
            foreach ($one as $key => $item) {
                $cookies[$key] = isset($cookies[$key]) && \is_array($cookies[$key]) && \is_array($item)
                    ? \array_replace_recursive($item, $cookies[$key])
                    : $cookies[$key] ?? $item;
            }
        }
        $_COOKIE = $cookies;
        $post = ($params['REQUEST_METHOD'] ?? '') === 'POST';
        $type = \strtolower(\trim(\explode(';', $params['CONTENT_TYPE'] ?? '')[0]));
        [$_POST, $_FILES] = $post ? $this->form($type, $params['CONTENT_TYPE'] ?? '', $body) : [[], []];
        $_REQUEST = \array_merge($_GET, $_POST);
        if ($this->uploads !== []) {
            // is_uploaded_file() and move_uploaded_file() accept the request's own uploads, as under a web SAPI.
            $table = UploadTable::probe(SapiGlobals::find());
            foreach ($this->uploads as $path) {
                $table?->add($path);
            }
        }
        if ($this->input !== null && !($post && $type === 'multipart/form-data')) {
            \rewind($body);
            $this->input->replaceFromStream($body);
        }
        \rewind($body);
    }

    /** Removes upload files the script did not move. */
    public function cleanUp(): void
    {
        foreach ($this->uploads as $path) {
            if (\is_file($path)) {
                @\unlink($path);
            }
        }
    }

    /**
     * @param string $type the media type of $contentType, lower-cased
     * @param resource $body
     *
     * @return array{array<array-key, mixed>, array<array-key, mixed>}
     */
    private function form(string $type, string $contentType, mixed $body): array
    {
        if ($type === 'application/x-www-form-urlencoded') {
            \parse_str((string) \stream_get_contents($body), $post);

            return [$post, []];
        }
        if ($type !== 'multipart/form-data') {
            return [[], []];
        }
        try {
            $limits = new BodyLimits();
            $parser = new MultipartParser(MultipartParser::boundary($contentType), $limits);
            while (!\feof($body) && ($piece = \fread($body, 65536)) !== false && $piece !== '') {
                $parser->feed($piece);
            }
            [$fields, $files] = $parser->finish();
            foreach ($files as [, $file]) {
                if ($file->isOk()) {
                    $this->uploads[] = $file->path();
                }
            }

            return [FormNames::fields($fields, $limits), self::filesArray(FormNames::files($files, $limits))];
        } catch (BadRequestBodyException $e) {
            \fwrite(\STDERR, 'Kiln fork: request body not parsed: ' . $e->getMessage() . "\n");

            return [[], []];
        }
    }

    /**
     * PHP's $_FILES layout: each top-level field has name/type/tmp_name/error/size (and full_path), and
     * a nested field keeps its nesting inside each of those.
     *
     * @param array<array-key, mixed> $tree
     *
     * @return array<array-key, mixed>
     */
    private static function filesArray(array $tree): array
    {
        $out = [];
        foreach ($tree as $field => $node) {
            foreach (['name', 'full_path', 'type', 'tmp_name', 'error', 'size'] as $key) {
                $out[$field][$key] = self::pick($node, $key);
            }
        }

        return $out;
    }

    private static function pick(mixed $node, string $key): mixed
    {
        if ($node instanceof UploadedFile) {
            return match ($key) {
                'name' => \basename(\str_replace('\\', '/', $node->clientFilename())),
                'full_path' => $node->clientFilename(),
                'type' => $node->clientMediaType(),
                'tmp_name' => $node->isOk() ? $node->path() : '',
                'error' => $node->error(),
                default => $node->size(),
            };
        }
        $out = [];
        foreach (\is_array($node) ? $node : [] as $k => $child) {
            $out[$k] = self::pick($child, $key);
        }

        return $out;
    }
}
