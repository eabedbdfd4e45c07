<?php

declare(strict_types=1);

namespace Kiln\Site\Fork\Internal;

use Kiln\Http\BadRequestBodyException;
use Kiln\Http\Body\BodyLimits;
use Kiln\Http\Body\ScriptForm;
use Kiln\Site\Sequential\Engine\InputBody;
use Kiln\Site\Sequential\Engine\SapiGlobals;
use Kiln\Site\Sequential\Engine\UploadTable;
use Kiln\Site\Sequential\ScriptEnvironment;
use Kiln\Site\Sequential\Superglobals;
use Kiln\Site\Sequential\UploadedFiles;

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
        if (($params['CONTENT_LENGTH'] ?? '') === '0' && !isset($params['HTTP_CONTENT_LENGTH']) && !isset($params['HTTP_TRANSFER_ENCODING'])) {
            // SCGI always sends a length; a request without a body nor a Content-Length has '' (as CgiParams and nginx give it).
            $server['CONTENT_LENGTH'] = '';
        }
        $server['PHP_SELF'] = ($params['SCRIPT_NAME'] ?? '') . ($params['PATH_INFO'] ?? '');
        $server['REQUEST_TIME_FLOAT'] = $now;
        $server['REQUEST_TIME'] = (int) $now;
        $_SERVER = $server;
        $_ENV = [];
        (new ScriptEnvironment())->apply($params); // getenv() sees the request's variables, as under a web SAPI
        \parse_str($params['QUERY_STRING'] ?? '', $get);
        $_GET = $get;
        $_COOKIE = isset($params['HTTP_COOKIE']) ? Superglobals::cookieHeader($params['HTTP_COOKIE']) : [];
        $post = ($params['REQUEST_METHOD'] ?? '') === 'POST';
        $type = \strtolower(\trim(\explode(';', $params['CONTENT_TYPE'] ?? '')[0]));
        [$_POST, $_FILES] = $post ? $this->form($params['CONTENT_TYPE'] ?? '', (int) ($params['CONTENT_LENGTH'] ?? 0), $body) : [[], []];
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
     * $_POST and $_FILES as PHP reads them, under the fork server's upload_max_filesize, max_file_uploads,
     * post_max_size and max_input_vars (its -d settings, from --php-ini); PHP's warnings go to the log.
     *
     * @param resource $body
     *
     * @return array{array<array-key, mixed>, array<array-key, mixed>}
     */
    private function form(string $contentType, int $length, mixed $body): array
    {
        try {
            $form = ScriptForm::read($contentType, $length, $body, BodyLimits::forScripts());
        } catch (BadRequestBodyException $e) {
            \fwrite(\STDERR, 'Kiln fork: request body not parsed: ' . $e->getMessage() . "\n");

            return [[], []];
        }
        foreach ($form->uploads as $file) {
            if ($file->isOk()) {
                $this->uploads[] = $file->path();
            }
        }
        foreach ($form->warnings as $warning) {
            \fwrite(\STDERR, "PHP Warning:  $warning in Unknown on line 0\n");
        }

        return [$form->post, UploadedFiles::toGlobal($form->files)];
    }
}
