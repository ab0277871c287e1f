;;; drive_eglot.el --- use Toolgate from Emacs' own LSP client, as a person would, in batch mode.
;;
;; Loads the configuration from docs/EDITORS.md (TOOLGATE_EDITOR_CONFIG), opens
;; TOOLGATE_TEST_FILE, asks the agent, accepts its proposal from the code-action menu, saves,
;; then runs the tests and reads the diagnostics Emacs shows, and has the model review the
;; changes (`toolgate-review') and reads its comments there too.  What happened is written to
;; TOOLGATE_TEST_OUT as JSON.

(setq debug-on-error t)
(defvar toolgate-test-titles nil)
(defvar toolgate-test-text nil)
(defvar toolgate-test-diagnostics nil)
(defvar toolgate-test-review nil)
(require 'eglot)
(require 'cl-lib)
(load-file (getenv "TOOLGATE_EDITOR_CONFIG"))

(defvar toolgate-test-asked nil "Every question Emacs put to the person.")

;; Batch Emacs never reads its event queue, so the file-notify events of eglot's watches (the
;; server asks it to watch the session files) pile up there unread; from the first one on, no
;; process sentinel runs, and Flymake's checkers never report. An interactive Emacs reads them.
(cl-defmethod eglot-register-capability :around
  (_server (_method (eql workspace/didChangeWatchedFiles)) _id &rest _)
  nil)

(defun toolgate-test-wait (what predicate seconds)
  "Let Emacs work until PREDICATE returns non-nil; fail naming WHAT after SECONDS."
  (let ((deadline (+ (float-time) seconds)) value)
    (while (and (not (setq value (funcall predicate))) (< (float-time) deadline))
      (accept-process-output nil 0.1))
    (or value (error "Timed out waiting for %s" what))))

;; The person's answers: the "Accept" entry of the code-action menu, and yes to
;; "Server wants to edit … Proceed?".
(advice-add 'completing-read :override
            (lambda (prompt collection &rest _)
              (push prompt toolgate-test-asked)
              (let ((choice (cl-find-if (lambda (c)
                                          (string-prefix-p "Accept " (if (consp c) (car c) c)))
                                        collection)))
                (if (consp choice) (car choice) choice))))
(advice-add 'y-or-n-p :override
            (lambda (prompt) (push prompt toolgate-test-asked) t))

;; "problems": the configuration tells the agent what pyflakes (Flymake's Python checker)
;; says of the file before and after the accepted change; what Flymake shows is written out.
(defvar toolgate-test-run-ended nil)
(cl-defmethod eglot-handle-notification
  (_server (_method (eql toolgate/event)) &key type &allow-other-keys)
  (when (equal type "run_finished") (setq toolgate-test-run-ended t)))
(defun toolgate-test-pyflakes ()
  "What Flymake's Python checker says of this buffer, as last checked.
Flymake restarts a check that is running when asked again: these polls only read."
  (cl-loop for diag in (flymake-diagnostics)
           when (eq (flymake-diagnostic-backend diag) 'python-flymake)
           collect (list :line (line-number-at-pos (flymake-diagnostic-beg diag))
                         :text (flymake-diagnostic-text diag))))
(when (equal (getenv "TOOLGATE_TEST_SCENARIO") "problems")
  (find-file (getenv "TOOLGATE_TEST_FILE"))
  (apply #'eglot (eglot--guess-contact))
  (toolgate-test-wait "the server" (lambda () (ignore-errors (eglot-current-server))) 120)
  (flymake-start) ; batch mode runs no command, after which Flymake would start
  (let ((before (toolgate-test-wait "pyflakes' first word" #'toolgate-test-pyflakes 60)))
    (toolgate-ask "Fix add")
    (toolgate-test-wait
     "a proposal"
     (lambda ()
       (cl-some (lambda (action) (string-prefix-p "Accept" (plist-get action :title)))
                (eglot-code-actions (point-min) (point-max))))
     120)
    (let ((last-nonmenu-event 13))
      (eglot-code-actions (point-min) (point-max) nil t))
    (toolgate-test-wait "the end of the run" (lambda () toolgate-test-run-ended) 60)
    ;; The configuration had Flymake check the changed file again.
    (let ((after (toolgate-test-wait "pyflakes' word on the change"
                                     (lambda ()
                                       (let ((now (toolgate-test-pyflakes)))
                                         (and (not (equal now before)) now)))
                                     30)))
      (with-temp-file (getenv "TOOLGATE_TEST_OUT")
        (insert (json-serialize (list :before (vconcat before) :after (vconcat after)))))))
  (kill-emacs 0))

(find-file (getenv "TOOLGATE_TEST_FILE"))
(apply #'eglot (eglot--guess-contact))
(toolgate-test-wait "the server" (lambda () (ignore-errors (eglot-current-server))) 120)

(toolgate-ask "Fix add")
(toolgate-test-wait
 "a proposal"
 (lambda ()
   (cl-some (lambda (action) (string-prefix-p "Accept" (plist-get action :title)))
            (eglot-code-actions (point-min) (point-max))))
 120)
(setq toolgate-test-titles
      (mapcar (lambda (action) (plist-get action :title))
              (eglot-code-actions (point-min) (point-max))))
;; The menu as `M-x eglot-code-actions' shows it (a keyboard event, so not a popup menu).
(let ((last-nonmenu-event 13))
  (eglot-code-actions (point-min) (point-max) nil t))
(toolgate-test-wait "the accepted edit" (lambda () (not (string-search "a - b" (buffer-string)))) 60)
(save-buffer)
(setq toolgate-test-text (buffer-string))
;; As a person would, let the agent finish: after the edit its run waits for the
;; file's problems, which would otherwise race the test run and the review below.
(toolgate-test-wait "the end of the run" (lambda () toolgate-test-run-ended) 60)

;; Test failures come back as diagnostics on the failing line of the open test file.
(find-file (getenv "TOOLGATE_TEST_TESTS"))
(toolgate-test-wait "the test file managed" (lambda () (eglot-current-server)) 60)
(toolgate-run-tests)
;; An interactive Emacs starts Flymake's check after a command; batch mode runs no commands.
(toolgate-test-wait "diagnostics" (lambda () (flymake-start) (flymake-diagnostics)) 120)
(setq toolgate-test-diagnostics
      (mapcar (lambda (diag)
                (list :line (line-number-at-pos (flymake-diagnostic-beg diag))
                      :type (symbol-name (flymake-diagnostic-type diag))
                      :text (flymake-diagnostic-text diag)))
              (flymake-diagnostics)))

;; The model reviews the changes: its comment is a Flymake diagnostic on the line it is about.
(find-file (getenv "TOOLGATE_TEST_FILE"))
(toolgate-review nil)
(defun toolgate-test-seen (diagnostics)
  "DIAGNOSTICS as the test reads them."
  (mapcar (lambda (diag)
            (list :line (line-number-at-pos (flymake-diagnostic-beg diag))
                  :type (symbol-name (flymake-diagnostic-type diag))
                  :text (flymake-diagnostic-text diag)))
          diagnostics))
(toolgate-test-wait "the review's comments"
                    (lambda ()
                      (flymake-start)
                      (cl-remove-if-not (lambda (diag)
                                          (string-search "toolgate-review"
                                                         (flymake-diagnostic-text diag)))
                                        (flymake-diagnostics)))
                    120)
(setq toolgate-test-review (toolgate-test-seen (flymake-diagnostics)))
(with-temp-file (getenv "TOOLGATE_TEST_OUT")
  (insert
   (json-serialize
    (list :asked (vconcat (reverse toolgate-test-asked))
          :titles (vconcat toolgate-test-titles)
          :text toolgate-test-text
          :diagnostics (vconcat toolgate-test-diagnostics)
          :review (vconcat toolgate-test-review)))))
(kill-emacs 0)
