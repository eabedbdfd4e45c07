<?php

declare(strict_types=1);

namespace Kiln\Http\Static;

/**
 * Content-Type by file extension: one map for the whole server (static files and Response::file()).
 *
 * The map follows nginx's mime.types and the IANA registry, with the modern choices browsers expect
 * (text/javascript per RFC 9239, font/* per RFC 8081, image/avif, application/wasm). Text types
 * (text/*) and JSON types get `; charset=utf-8`, as browsers otherwise guess (and guess latin-1 for
 * text/plain); XML and SVG do not, since their own declaration names the encoding and a charset
 * parameter would override it. Unknown extensions are application/octet-stream.
 */
final class MimeTypes
{
    public const DEFAULT = 'application/octet-stream';

    private const TYPES = [
        // Text and markup
        'html' => 'text/html', 'htm' => 'text/html', 'shtml' => 'text/html', 'xhtml' => 'application/xhtml+xml',
        'txt' => 'text/plain', 'text' => 'text/plain', 'log' => 'text/plain', 'conf' => 'text/plain', 'ini' => 'text/plain',
        'def' => 'text/plain', 'list' => 'text/plain', 'in' => 'text/plain', 'asc' => 'text/plain',
        'css' => 'text/css', 'csv' => 'text/csv', 'tsv' => 'text/tab-separated-values', 'md' => 'text/markdown',
        'markdown' => 'text/markdown', 'rtx' => 'text/richtext', 'rtf' => 'application/rtf', 'sgml' => 'text/sgml',
        'sgm' => 'text/sgml', 'vtt' => 'text/vtt', 'srt' => 'application/x-subrip', 'ics' => 'text/calendar',
        'ifb' => 'text/calendar', 'vcf' => 'text/vcard', 'vcard' => 'text/vcard', 'jad' => 'text/vnd.sun.j2me.app-descriptor',
        'wml' => 'text/vnd.wap.wml', 'htc' => 'text/x-component', 'mml' => 'text/mathml', 'n3' => 'text/n3',
        'ttl' => 'text/turtle', 'uri' => 'text/uri-list', 'uris' => 'text/uri-list', 'yaml' => 'text/yaml',
        'yml' => 'text/yaml', 'toml' => 'application/toml', 'rst' => 'text/x-rst', 'tex' => 'application/x-tex',
        'latex' => 'application/x-latex', 'diff' => 'text/x-diff', 'patch' => 'text/x-diff',
        'appcache' => 'text/cache-manifest', 'manifest' => 'text/cache-manifest',
        // Scripts, data, structured text
        'js' => 'text/javascript', 'mjs' => 'text/javascript', 'cjs' => 'text/javascript', 'jsx' => 'text/javascript',
        'ts' => 'video/mp2t', 'json' => 'application/json', 'map' => 'application/json', 'jsonld' => 'application/ld+json',
        'webmanifest' => 'application/manifest+json', 'geojson' => 'application/geo+json', 'topojson' => 'application/json',
        'har' => 'application/json', 'ndjson' => 'application/x-ndjson', 'jsonl' => 'application/jsonl',
        'xml' => 'application/xml', 'xsl' => 'application/xml', 'xslt' => 'application/xslt+xml', 'xsd' => 'application/xml',
        'dtd' => 'application/xml-dtd', 'rss' => 'application/rss+xml', 'atom' => 'application/atom+xml',
        'rdf' => 'application/rdf+xml', 'kml' => 'application/vnd.google-earth.kml+xml', 'kmz' => 'application/vnd.google-earth.kmz',
        'gpx' => 'application/gpx+xml', 'opml' => 'text/x-opml', 'plist' => 'application/x-plist', 'wsdl' => 'application/wsdl+xml',
        'xspf' => 'application/xspf+xml', 'mathml' => 'application/mathml+xml', 'smil' => 'application/smil+xml',
        'graphql' => 'application/graphql', 'gql' => 'application/graphql', 'sql' => 'application/sql',
        'wasm' => 'application/wasm', 'swf' => 'application/x-shockwave-flash', 'jar' => 'application/java-archive',
        'war' => 'application/java-archive', 'ear' => 'application/java-archive', 'class' => 'application/java-vm',
        'jnlp' => 'application/x-java-jnlp-file', 'ser' => 'application/java-serialized-object',
        'sh' => 'application/x-sh', 'csh' => 'application/x-csh', 'pl' => 'application/x-perl', 'pm' => 'application/x-perl',
        'py' => 'text/x-python', 'rb' => 'text/x-ruby', 'lua' => 'text/x-lua', 'tcl' => 'application/x-tcl',
        'tk' => 'application/x-tcl', 'c' => 'text/x-c', 'h' => 'text/x-c', 'cc' => 'text/x-c', 'cpp' => 'text/x-c',
        'hpp' => 'text/x-c', 'java' => 'text/x-java-source', 'go' => 'text/x-go', 'rs' => 'text/x-rust',
        'swift' => 'text/x-swift', 'kt' => 'text/x-kotlin', 'scala' => 'text/x-scala', 'coffee' => 'text/coffeescript',
        'less' => 'text/less', 'scss' => 'text/x-scss', 'sass' => 'text/x-sass', 'styl' => 'text/stylus',
        'vue' => 'text/plain', 'svelte' => 'text/plain', 'hbs' => 'text/x-handlebars-template', 'mustache' => 'text/plain',
        'twig' => 'text/plain', 'tpl' => 'text/plain', 'properties' => 'text/plain', 'env' => 'text/plain',
        'pem' => 'application/x-pem-file', 'crt' => 'application/x-x509-ca-cert', 'cer' => 'application/pkix-cert',
        'der' => 'application/x-x509-ca-cert', 'p7b' => 'application/x-pkcs7-certificates', 'p7c' => 'application/pkcs7-mime',
        'p7m' => 'application/pkcs7-mime', 'p7s' => 'application/pkcs7-signature', 'p10' => 'application/pkcs10',
        'p12' => 'application/x-pkcs12', 'pfx' => 'application/x-pkcs12', 'crl' => 'application/pkix-crl',
        'sig' => 'application/pgp-signature', 'pgp' => 'application/pgp-encrypted', 'gpg' => 'application/pgp-encrypted',
        // Images
        'png' => 'image/png', 'apng' => 'image/apng', 'jpg' => 'image/jpeg', 'jpeg' => 'image/jpeg', 'jpe' => 'image/jpeg',
        'jfif' => 'image/jpeg', 'pjpeg' => 'image/jpeg', 'pjp' => 'image/jpeg', 'gif' => 'image/gif', 'webp' => 'image/webp',
        'avif' => 'image/avif', 'avifs' => 'image/avif-sequence', 'heic' => 'image/heic', 'heif' => 'image/heif',
        'jxl' => 'image/jxl', 'jp2' => 'image/jp2', 'jpx' => 'image/jpx', 'jpm' => 'image/jpm', 'j2k' => 'image/jp2',
        'svg' => 'image/svg+xml', 'svgz' => 'image/svg+xml', 'ico' => 'image/x-icon', 'cur' => 'image/x-icon',
        'bmp' => 'image/bmp', 'dib' => 'image/bmp', 'tif' => 'image/tiff', 'tiff' => 'image/tiff',
        'psd' => 'image/vnd.adobe.photoshop', 'wbmp' => 'image/vnd.wap.wbmp', 'jng' => 'image/x-jng',
        'xbm' => 'image/x-xbitmap', 'xpm' => 'image/x-xpixmap', 'pbm' => 'image/x-portable-bitmap',
        'pgm' => 'image/x-portable-graymap', 'ppm' => 'image/x-portable-pixmap', 'pnm' => 'image/x-portable-anymap',
        'ras' => 'image/x-cmu-raster', 'rgb' => 'image/x-rgb', 'tga' => 'image/x-tga', 'djvu' => 'image/vnd.djvu',
        'djv' => 'image/vnd.djvu', 'dng' => 'image/x-adobe-dng', 'cr2' => 'image/x-canon-cr2', 'nef' => 'image/x-nikon-nef',
        'exr' => 'image/x-exr', 'hdr' => 'image/vnd.radiance', 'ktx' => 'image/ktx', 'ktx2' => 'image/ktx2',
        'dds' => 'image/vnd.ms-dds', 'emf' => 'image/emf', 'wmf' => 'image/wmf', 'qoi' => 'image/qoi',
        // Audio
        'mp3' => 'audio/mpeg', 'mpga' => 'audio/mpeg', 'm4a' => 'audio/mp4', 'mp4a' => 'audio/mp4', 'aac' => 'audio/aac',
        'oga' => 'audio/ogg', 'ogg' => 'audio/ogg', 'opus' => 'audio/ogg', 'spx' => 'audio/ogg', 'flac' => 'audio/flac',
        'wav' => 'audio/wav', 'weba' => 'audio/webm', 'mid' => 'audio/midi', 'midi' => 'audio/midi', 'kar' => 'audio/midi',
        'aif' => 'audio/x-aiff', 'aiff' => 'audio/x-aiff', 'aifc' => 'audio/x-aiff', 'au' => 'audio/basic',
        'snd' => 'audio/basic', 'ra' => 'audio/x-realaudio', 'ram' => 'audio/x-pn-realaudio', 'wma' => 'audio/x-ms-wma',
        'wax' => 'audio/x-ms-wax', 'm3u' => 'audio/x-mpegurl', 'pls' => 'audio/x-scpls', 'caf' => 'audio/x-caf',
        'amr' => 'audio/amr', '3gpp' => 'video/3gpp', 'mka' => 'audio/x-matroska', 'ac3' => 'audio/ac3',
        // Video
        'mp4' => 'video/mp4', 'm4v' => 'video/mp4', 'mp4v' => 'video/mp4', 'mpg4' => 'video/mp4', 'webm' => 'video/webm',
        'ogv' => 'video/ogg', 'mpeg' => 'video/mpeg', 'mpg' => 'video/mpeg', 'mpe' => 'video/mpeg', 'm1v' => 'video/mpeg',
        'm2v' => 'video/mpeg', 'mov' => 'video/quicktime', 'qt' => 'video/quicktime', 'avi' => 'video/x-msvideo',
        'wmv' => 'video/x-ms-wmv', 'wm' => 'video/x-ms-wm', 'wmx' => 'video/x-ms-wmx', 'asf' => 'video/x-ms-asf',
        'asx' => 'video/x-ms-asf', 'flv' => 'video/x-flv', 'f4v' => 'video/mp4', 'mkv' => 'video/x-matroska',
        'mk3d' => 'video/x-matroska', '3gp' => 'video/3gpp', '3g2' => 'video/3gpp2', 'mng' => 'video/x-mng',
        'm3u8' => 'application/vnd.apple.mpegurl', 'mpd' => 'application/dash+xml', 'm2ts' => 'video/mp2t',
        'mts' => 'video/mp2t', 'h264' => 'video/h264', 'ivf' => 'video/x-ivf', 'movie' => 'video/x-sgi-movie',
        // Fonts
        'woff' => 'font/woff', 'woff2' => 'font/woff2', 'ttf' => 'font/ttf', 'otf' => 'font/otf', 'ttc' => 'font/collection',
        'eot' => 'application/vnd.ms-fontobject', 'sfnt' => 'font/sfnt', 'pfb' => 'application/x-font-type1',
        'pfa' => 'application/x-font-type1', 'afm' => 'application/x-font-type1', 'bdf' => 'application/x-font-bdf',
        'pcf' => 'application/x-font-pcf', 'snf' => 'application/x-font-snf',
        // Documents
        'pdf' => 'application/pdf', 'ps' => 'application/postscript', 'eps' => 'application/postscript',
        'ai' => 'application/postscript', 'epub' => 'application/epub+zip', 'mobi' => 'application/x-mobipocket-ebook',
        'azw' => 'application/vnd.amazon.ebook', 'azw3' => 'application/vnd.amazon.mobi8-ebook', 'fb2' => 'application/x-fictionbook+xml',
        'cbz' => 'application/vnd.comicbook+zip', 'cbr' => 'application/vnd.comicbook-rar', 'chm' => 'application/vnd.ms-htmlhelp',
        'doc' => 'application/msword', 'dot' => 'application/msword',
        'docx' => 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
        'dotx' => 'application/vnd.openxmlformats-officedocument.wordprocessingml.template',
        'docm' => 'application/vnd.ms-word.document.macroEnabled.12',
        'xls' => 'application/vnd.ms-excel', 'xlt' => 'application/vnd.ms-excel', 'xla' => 'application/vnd.ms-excel',
        'xlsx' => 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
        'xltx' => 'application/vnd.openxmlformats-officedocument.spreadsheetml.template',
        'xlsm' => 'application/vnd.ms-excel.sheet.macroEnabled.12', 'xlsb' => 'application/vnd.ms-excel.sheet.binary.macroEnabled.12',
        'ppt' => 'application/vnd.ms-powerpoint', 'pps' => 'application/vnd.ms-powerpoint', 'pot' => 'application/vnd.ms-powerpoint',
        'pptx' => 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
        'ppsx' => 'application/vnd.openxmlformats-officedocument.presentationml.slideshow',
        'potx' => 'application/vnd.openxmlformats-officedocument.presentationml.template',
        'pptm' => 'application/vnd.ms-powerpoint.presentation.macroEnabled.12',
        'vsd' => 'application/vnd.visio', 'vsdx' => 'application/vnd.ms-visio.drawing', 'mpp' => 'application/vnd.ms-project',
        'pub' => 'application/x-mspublisher', 'one' => 'application/onenote', 'msg' => 'application/vnd.ms-outlook',
        'odt' => 'application/vnd.oasis.opendocument.text', 'ott' => 'application/vnd.oasis.opendocument.text-template',
        'ods' => 'application/vnd.oasis.opendocument.spreadsheet', 'ots' => 'application/vnd.oasis.opendocument.spreadsheet-template',
        'odp' => 'application/vnd.oasis.opendocument.presentation', 'otp' => 'application/vnd.oasis.opendocument.presentation-template',
        'odg' => 'application/vnd.oasis.opendocument.graphics', 'odc' => 'application/vnd.oasis.opendocument.chart',
        'odf' => 'application/vnd.oasis.opendocument.formula', 'odb' => 'application/vnd.oasis.opendocument.database',
        'odm' => 'application/vnd.oasis.opendocument.text-master', 'pages' => 'application/vnd.apple.pages',
        'numbers' => 'application/vnd.apple.numbers', 'key' => 'application/vnd.apple.keynote',
        'wpd' => 'application/vnd.wordperfect', 'xps' => 'application/vnd.ms-xpsdocument', 'oxps' => 'application/oxps',
        'dvi' => 'application/x-dvi', 'bib' => 'text/x-bibtex', 'ipynb' => 'application/x-ipynb+json',
        // Archives, packages, binaries
        'zip' => 'application/zip', 'gz' => 'application/gzip', 'tgz' => 'application/gzip', 'bz2' => 'application/x-bzip2',
        'tbz2' => 'application/x-bzip2', 'xz' => 'application/x-xz', 'txz' => 'application/x-xz', 'lz' => 'application/x-lzip',
        'lzma' => 'application/x-lzma', 'lz4' => 'application/x-lz4', 'zst' => 'application/zstd', 'br' => 'application/x-brotli',
        'z' => 'application/x-compress', 'tar' => 'application/x-tar', '7z' => 'application/x-7z-compressed',
        'rar' => 'application/vnd.rar', 'cab' => 'application/vnd.ms-cab-compressed', 'arj' => 'application/x-arj',
        'cpio' => 'application/x-cpio', 'shar' => 'application/x-shar', 'iso' => 'application/x-iso9660-image',
        'img' => 'application/octet-stream', 'dmg' => 'application/x-apple-diskimage', 'pkg' => 'application/octet-stream',
        'deb' => 'application/vnd.debian.binary-package', 'rpm' => 'application/x-redhat-package-manager',
        'apk' => 'application/vnd.android.package-archive', 'aab' => 'application/x-authorware-bin',
        'ipa' => 'application/octet-stream', 'xpi' => 'application/x-xpinstall', 'crx' => 'application/x-chrome-extension',
        'msi' => 'application/x-msdownload', 'msp' => 'application/octet-stream', 'msm' => 'application/octet-stream',
        'exe' => 'application/x-msdownload', 'dll' => 'application/x-msdownload', 'com' => 'application/x-msdownload',
        'bat' => 'application/x-msdownload', 'bin' => 'application/octet-stream', 'so' => 'application/octet-stream',
        'o' => 'application/octet-stream', 'a' => 'application/octet-stream', 'elf' => 'application/octet-stream',
        'appimage' => 'application/vnd.appimage', 'flatpak' => 'application/vnd.flatpak', 'snap' => 'application/vnd.snap',
        'torrent' => 'application/x-bittorrent', 'run' => 'application/x-makeself', 'sea' => 'application/x-sea',
        'sit' => 'application/x-stuffit', 'hqx' => 'application/mac-binhex40', 'cco' => 'application/x-cocoa',
        'jardiff' => 'application/x-java-archive-diff', 'prc' => 'application/x-pilot', 'pdb' => 'application/x-pilot',
        'sqlite' => 'application/vnd.sqlite3', 'sqlite3' => 'application/vnd.sqlite3', 'db' => 'application/octet-stream',
        'parquet' => 'application/vnd.apache.parquet', 'avro' => 'application/avro', 'arrow' => 'application/vnd.apache.arrow.file',
        'npy' => 'application/octet-stream', 'pb' => 'application/x-protobuf', 'proto' => 'text/plain',
        'msgpack' => 'application/msgpack', 'cbor' => 'application/cbor', 'bson' => 'application/bson',
        // 3D, GIS, science
        'gltf' => 'model/gltf+json', 'glb' => 'model/gltf-binary', 'obj' => 'model/obj', 'mtl' => 'model/mtl',
        'stl' => 'model/stl', 'usdz' => 'model/vnd.usdz+zip', 'fbx' => 'application/octet-stream', 'dae' => 'model/vnd.collada+xml',
        'ply' => 'application/octet-stream', 'wrl' => 'model/vrml', 'vrml' => 'model/vrml', 'x3d' => 'model/x3d+xml',
        'shp' => 'application/vnd.shp', 'shx' => 'application/vnd.shx', 'dbf' => 'application/vnd.dbf',
        'nc' => 'application/x-netcdf', 'cdf' => 'application/x-netcdf', 'fits' => 'application/fits', 'hdf' => 'application/x-hdf',
        'h5' => 'application/x-hdf5', 'mat' => 'application/x-matlab-data', 'rda' => 'application/octet-stream',
        // Miscellaneous web
        'eml' => 'message/rfc822', 'mht' => 'message/rfc822', 'mhtml' => 'message/rfc822', 'mbox' => 'application/mbox',
        'vcs' => 'text/x-vcalendar',
        'xul' => 'application/vnd.mozilla.xul+xml', 'xap' => 'application/x-silverlight-app', 'xbap' => 'application/x-ms-xbap',
        'application' => 'application/x-ms-application', 'webapp' => 'application/x-web-app-manifest+json',
        'ps1' => 'text/plain', 'cmd' => 'text/plain', 'vbs' => 'text/vbscript', 'reg' => 'text/plain',
        'bz' => 'application/x-bzip', 'ace' => 'application/x-ace-compressed', 'cpt' => 'application/mac-compactpro',
        'pkpass' => 'application/vnd.apple.pkpass', 'mobileconfig' => 'application/x-apple-aspen-config',
        'kdbx' => 'application/octet-stream', 'ova' => 'application/x-virtualbox-ova', 'ovf' => 'application/x-virtualbox-ovf',
        'vmdk' => 'application/x-virtualbox-vmdk', 'vdi' => 'application/x-virtualbox-vdi', 'vhd' => 'application/x-virtualbox-vhd',
        'qcow2' => 'application/octet-stream',
        'xliff' => 'application/xliff+xml', 'xlf' => 'application/xliff+xml', 'po' => 'text/x-gettext-translation',
        'mo' => 'application/x-gettext-translation',
        'gcode' => 'text/x-gcode', 'dxf' => 'image/vnd.dxf', 'dwg' => 'image/vnd.dwg', 'step' => 'model/step',
        'stp' => 'model/step', 'iges' => 'model/iges', 'igs' => 'model/iges', 'blend' => 'application/x-blender',
    ];

    /** Media types whose bytes shrink under gzip/brotli (besides text/*, *+json, *+xml). */
    private const COMPRESSIBLE = [
        'text/javascript' => true, 'application/json' => true, 'application/xml' => true, 'application/wasm' => true,
        'application/ld+json' => true, 'application/manifest+json' => true, 'application/geo+json' => true,
        'application/x-ndjson' => true, 'application/jsonl' => true, 'application/graphql' => true, 'application/sql' => true,
        'application/xml-dtd' => true, 'application/rtf' => true, 'application/toml' => true, 'application/x-sh' => true,
        'application/x-csh' => true, 'application/x-perl' => true, 'application/x-tcl' => true, 'application/x-tex' => true,
        'application/x-latex' => true, 'application/x-subrip' => true, 'application/postscript' => true,
        'application/x-javascript' => true, 'application/javascript' => true, 'application/x-plist' => true,
        'application/vnd.ms-fontobject' => true, 'application/x-font-type1' => true, 'application/x-font-bdf' => true,
        'application/x-font-pcf' => true, 'application/x-pem-file' => true, 'application/vnd.apple.mpegurl' => true,
        'application/mbox' => true, 'message/rfc822' => true, 'application/x-ipynb+json' => true,
        'font/ttf' => true, 'font/otf' => true, 'font/collection' => true, 'font/sfnt' => true,
        'image/x-icon' => true, 'image/bmp' => true, 'image/vnd.ms-dds' => true, 'image/x-xbitmap' => true,
        'image/x-xpixmap' => true, 'image/x-portable-bitmap' => true, 'image/x-portable-graymap' => true,
        'image/x-portable-pixmap' => true, 'image/x-portable-anymap' => true, 'image/x-tga' => true,
        'model/obj' => true, 'model/mtl' => true, 'model/stl' => true, 'model/vrml' => true, 'model/gltf+json' => true,
    ];

    /** The full Content-Type value for a path (or file name) by its extension. */
    public static function forPath(string $path): string
    {
        $dot = strrpos($path, '.');
        $slash = strrpos($path, '/');
        if ($dot === false || ($slash !== false && $dot < $slash)) {
            return self::DEFAULT;
        }
        return self::forExtension(substr($path, $dot + 1));
    }

    /** The full Content-Type value for an extension without its dot ("css", "tar.gz" is "gz"). */
    public static function forExtension(string $extension): string
    {
        $type = self::TYPES[strtolower($extension)] ?? null;
        if ($type === null) {
            return self::DEFAULT;
        }
        return self::needsCharset($type) ? $type . '; charset=utf-8' : $type;
    }

    /** Whether gzip/brotli pays for this media type (parameters ignored). */
    public static function isCompressible(string $contentType): bool
    {
        $type = strtolower(trim(explode(';', $contentType, 2)[0]));
        return str_starts_with($type, 'text/') || str_ends_with($type, '+json') || str_ends_with($type, '+xml')
            || isset(self::COMPRESSIBLE[$type]);
    }

    /** @return array<string, string> extension => media type (without charset), for tests and tools */
    public static function all(): array
    {
        return self::TYPES;
    }

    private static function needsCharset(string $type): bool
    {
        return str_starts_with($type, 'text/') || $type === 'application/json' || str_ends_with($type, '+json')
            || $type === 'application/x-ndjson' || $type === 'application/jsonl';
    }
}
